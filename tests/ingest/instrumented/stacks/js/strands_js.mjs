// Strands Agents' TypeScript SDK (`@strands-agents/sdk`): an `Agent` with the scenario's
// tools (`tool()` with JSON-schema inputs), its OpenAI model provider on the scripted
// server, traced by Strands itself on the global tracer provider (its `Tracer` takes
// `trace.getTracer`: `invoke_agent`, `execute_agent_loop_cycle`, `chat`, `execute_tool`
// spans, strands-agents/sdk-typescript `src/telemetry/tracer.ts`). The same agent
// object carries the conversation across turns. Its OpenAI provider streams every request.
// `strands-js-responses`: the provider's default, the Responses API; `strands-js` and
// `strands-js-latest`: `api: 'chat'`, chat completions; `strands-js-latest` with the latest
// GenAI conventions and the tools' definitions, as Strands' tracer documents the opt-ins
// (`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental,gen_ai_tool_definitions`), the
// others with Strands' default (per-message span events, tools by name only). A tool that
// throws is told to the model as an error result, Strands' default.

import { AGENT_NAME, TOOL_FUNCTIONS, fetchFirstRole, main, withProviders } from './common.mjs';

const LATEST = new Set(['strands-js-latest']);
const RESPONSES = new Set(['strands-js-responses']);

await main(async ({ stack, scenario, baseUrl, out, script }) => {
  if (LATEST.has(stack)) {
    process.env.OTEL_SEMCONV_STABILITY_OPT_IN = 'gen_ai_latest_experimental,gen_ai_tool_definitions';
  }
  await withProviders(stack, out, scenario, async () => {
    const { Agent, tool } = await import('@strands-agents/sdk');
    const { OpenAIModel } = await import('@strands-agents/sdk/models/openai');
    const tools = script.tools.map(({ function: fn }) =>
      tool({
        name: fn.name,
        description: fn.description,
        inputSchema: fn.parameters,
        callback: async (input) => TOOL_FUNCTIONS[fn.name](input),
      }),
    );
    const model = new OpenAIModel({
      api: RESPONSES.has(stack) ? 'responses' : 'chat',
      modelId: script.model,
      apiKey: 'test-key',
      // The server names a stream's role only beside text; OpenAI names it in the first chunk,
      // which Strands' chat adapter starts the message on.
      clientConfig: { baseURL: baseUrl, maxRetries: 0, fetch: fetchFirstRole },
    });
    const agent = new Agent({ name: AGENT_NAME, systemPrompt: script.system, model, tools });
    for (const request of script.requests) await agent.invoke(request);
  });
});
