// The OpenAI Agents SDK for JS (`@openai/agents`) running an `Agent` on its chat completions
// model (`OpenAIChatCompletionsModel` on an `openai` client), its own tracing off (it exports
// only to OpenAI's platform, not to OTel), and the `openai` client traced by OpenInference's
// JS instrumentation (`@arizeai/openinference-instrumentation-openai`) or OpenLLMetry's
// (`@traceloop/instrumentation-openai`), as `common.mjs`'s `instrumentClient` patches either
// in. The conversation carries over turns as the SDK hands it back (`result.history`).
// `openai-agents-js-otel...` runs an SDK release on `openai` 6 (0.9.0) under the OTel JS
// contrib instrumentation (`@opentelemetry/instrumentation-openai` 0.22.0 patches `openai`
// below 7 only), which hooks the module loader: the client comes from the SDK it patched
// (`common.mjs`'s `requireInstrumented`), its content exported as log records;
// `-responses` puts the agent on the SDK's Responses model (`OpenAIResponsesModel`).

import {
  AGENT_NAME,
  TOOL_FUNCTIONS,
  instrumentClient,
  loaderHooked,
  main,
  requireInstrumented,
  toolText,
  withLogProviders,
  withProviders,
} from './common.mjs';

const STREAMED = new Set([
  'openai-agents-js-openinference-stream',
  'openai-agents-js-openllmetry-stream',
  'openai-agents-js-otel-stream',
  'openai-agents-js-otel-responses-stream',
]);

async function patchedOpenAI(stack, tracerProvider, loggerProvider) {
  if (loaderHooked(stack)) return requireInstrumented(stack, tracerProvider, loggerProvider);
  const OpenAI = (await import('openai')).default;
  await instrumentClient(stack, tracerProvider, OpenAI, 'openai', 'OpenAIInstrumentation');
  return OpenAI;
}

await main(async ({ stack, scenario, baseUrl, out, script }) => {
  await (loaderHooked(stack) ? withLogProviders : withProviders)(stack, out, scenario, async (
    tracerProvider,
    loggerProvider,
  ) => {
    const OpenAI = await patchedOpenAI(stack, tracerProvider, loggerProvider);
    const agents = await import('@openai/agents');
    const { Agent, run, setTracingDisabled, tool, user } = agents;
    setTracingDisabled(true);
    const client = new OpenAI({ baseURL: baseUrl, apiKey: 'test-key', maxRetries: 0 });
    const Model = stack.includes('-responses')
      ? agents.OpenAIResponsesModel
      : agents.OpenAIChatCompletionsModel;
    const agent = new Agent({
      name: AGENT_NAME,
      instructions: script.system,
      model: new Model(client, script.model),
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
