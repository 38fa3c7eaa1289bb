// Google's Agent Development Kit for TypeScript (`@google/adk`): an `LlmAgent` with the
// scenario's tools as `FunctionTool`s (JSON-schema parameters), run by an `InMemoryRunner`
// on one session over the turns, on ADK's native Gemini model (`@google/genai`, pointed at
// the scripted server's Gemini API by `GOOGLE_GEMINI_BASE_URL`, as the genai SDK reads it:
// ADK's `Gemini` takes no base URL) and traced by ADK itself (its `gcp.vertex.agent` tracer
// on the global provider: `invocation`, `invoke_agent`, `call_llm`, `execute_tool` spans
// with content in `gcp.vertex.agent.*` attributes). `adk-js-stream` runs with
// `StreamingMode.SSE`. A tool that throws is told to the model as `{error: message}`,
// ADK's default. Sources: google/adk-js core/src/telemetry/tracing.ts,
// core/src/agents/functions.ts.

import { AGENT_NAME, TOOL_FUNCTIONS, main, withProviders } from './common.mjs';

const STREAMED = new Set(['adk-js-stream']);
const GEMINI_MODEL = 'gemini-2.5-flash';
const APP = 'corpus';
const USER = 'user';

await main(async ({ stack, scenario, baseUrl, out, script }) => {
  process.env.GOOGLE_GEMINI_BASE_URL = baseUrl;
  await withProviders(stack, out, scenario, async () => {
    const { FunctionTool, Gemini, InMemoryRunner, LlmAgent, StreamingMode } = await import(
      '@google/adk'
    );
    const tools = script.tools.map(
      ({ function: fn }) =>
        new FunctionTool({
          name: fn.name,
          description: fn.description,
          parameters: fn.parameters,
          execute: async (input) => TOOL_FUNCTIONS[fn.name](input),
        }),
    );
    const agent = new LlmAgent({
      name: AGENT_NAME,
      model: new Gemini({ model: GEMINI_MODEL, apiKey: 'test-key' }),
      instruction: script.system,
      tools,
    });
    const runner = new InMemoryRunner({ agent, appName: APP });
    const sessionId = `sess-${stack}-${scenario}`;
    await runner.sessionService.createSession({ appName: APP, userId: USER, sessionId });
    const runConfig = STREAMED.has(stack) ? { streamingMode: StreamingMode.SSE } : undefined;
    for (const request of script.requests) {
      const newMessage = { role: 'user', parts: [{ text: request }] };
      for await (const _ of runner.runAsync({ userId: USER, sessionId, newMessage, runConfig }));
    }
  });
});
