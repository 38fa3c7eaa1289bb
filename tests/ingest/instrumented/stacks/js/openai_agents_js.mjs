// The OpenAI Agents SDK for JS (`@openai/agents`) running an `Agent` on its chat completions
// model (`OpenAIChatCompletionsModel` on an `openai` client), its own tracing off (it exports
// only to OpenAI's platform, not to OTel), and the `openai` client traced by OpenInference's
// JS instrumentation (`@arizeai/openinference-instrumentation-openai`, patched in with
// `manuallyInstrument`, as an ESM app without a loader hook does). The conversation carries
// over turns as the SDK hands it back (`result.history`).

import OpenAI from 'openai';
import { AGENT_NAME, TOOL_FUNCTIONS, main, withProviders } from './common.mjs';

const STREAMED = new Set([
  'openai-agents-js-openinference-stream',
  'openai-agents-js-openllmetry-stream',
]);

async function instrument(stack, tracerProvider) {
  if (stack.includes('openllmetry')) {
    const { OpenAIInstrumentation } = await import('@traceloop/instrumentation-openai');
    const instrumentation = new OpenAIInstrumentation({ traceContent: true });
    instrumentation.setTracerProvider(tracerProvider);
    instrumentation.manuallyInstrument(OpenAI);
    return;
  }
  const { OpenAIInstrumentation } = await import('@arizeai/openinference-instrumentation-openai');
  new OpenAIInstrumentation({ tracerProvider }).manuallyInstrument(OpenAI);
}

await main(async ({ stack, scenario, baseUrl, out, script }) => {
  await withProviders(stack, out, scenario, async (tracerProvider) => {
    await instrument(stack, tracerProvider);
    const { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool, user } =
      await import('@openai/agents');
    setTracingDisabled(true);
    const client = new OpenAI({ baseURL: baseUrl, apiKey: 'test-key', maxRetries: 0 });
    const agent = new Agent({
      name: AGENT_NAME,
      instructions: script.system,
      model: new OpenAIChatCompletionsModel(client, script.model),
      tools: script.tools.map(({ function: fn }) =>
        tool({
          name: fn.name,
          description: fn.description,
          parameters: fn.parameters,
          strict: false,
          execute: async (input) => {
            const result = TOOL_FUNCTIONS[fn.name](input);
            return typeof result === 'string' ? result : JSON.stringify(result);
          },
        }),
      ),
    });
    let history = [];
    for (const request of script.requests) {
      const input = [...history, user(request)];
      let result;
      if (STREAMED.has(stack)) {
        result = await run(agent, input, { stream: true, maxTurns: 8 });
        for await (const _ of result.toTextStream());
        await result.completed;
      } else {
        result = await run(agent, input, { maxTurns: 8 });
      }
      history = result.history;
    }
  });
});
