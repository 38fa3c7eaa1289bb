// The OpenAI Agents SDK for JS (`@openai/agents`) running an `Agent` on its chat completions
// model (`OpenAIChatCompletionsModel` on an `openai` client), its own tracing off (it exports
// only to OpenAI's platform, not to OTel), and the `openai` client traced by OpenInference's
// JS instrumentation (`@arizeai/openinference-instrumentation-openai`) or OpenLLMetry's
// (`@traceloop/instrumentation-openai`), as `common.mjs`'s `instrumentClient` patches either
// in. The conversation carries over turns as the SDK hands it back (`result.history`).

import OpenAI from 'openai';
import {
  AGENT_NAME,
  TOOL_FUNCTIONS,
  instrumentClient,
  main,
  toolText,
  withProviders,
} from './common.mjs';

const STREAMED = new Set([
  'openai-agents-js-openinference-stream',
  'openai-agents-js-openllmetry-stream',
]);

await main(async ({ stack, scenario, baseUrl, out, script }) => {
  await withProviders(stack, out, scenario, async (tracerProvider) => {
    await instrumentClient(stack, tracerProvider, OpenAI, 'openai', 'OpenAIInstrumentation');
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
          execute: async (input) => toolText(TOOL_FUNCTIONS[fn.name](input)),
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
