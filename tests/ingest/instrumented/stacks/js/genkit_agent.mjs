// Google's Genkit (JS): a flow named for the agent (`ai.defineFlow`, how a Genkit app
// exposes an AI function) generating with tools (`ai.generate`, Genkit's own tool loop up
// to 8 turns; `generateStream` for `-stream`) on the OpenAI-compatible plugin
// (`@genkit-ai/compat-oai`, a chat completions model defined on an `openai` client), traced
// by Genkit's own OpenTelemetry (`enableTelemetry` with the file exporter as its span
// processor's exporter: Genkit runs its own NodeSDK, OTel JS 1.x). The conversation carries
// over turns as Genkit hands it back (`response.messages`). A tool that throws ends the
// generate call with the error (Genkit gives the model no error result), so the stack runs
// no `tool_error` scenario.

import { AGENT_NAME, FileSpanExporter, TOOL_FUNCTIONS, fetchFirstRole, main } from './common.mjs';

await main(async ({ stack, scenario, baseUrl, out, script }) => {
  const { ProtobufTraceSerializer } = await import('@opentelemetry/otlp-transformer');
  const { BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { genkit } = await import('genkit'); // sets Genkit's Node telemetry provider up
  const { enableTelemetry, flushTracing } = await import('genkit/tracing');
  const exporter = new FileSpanExporter(out, scenario, ProtobufTraceSerializer);
  await enableTelemetry({
    serviceName: `stack-${stack}`,
    spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 4096, maxExportBatchSize: 4096 })],
  });
  const { openAICompatible, defineCompatOpenAIModel, compatOaiModelRef } = await import(
    '@genkit-ai/compat-oai'
  );
  const name = `local/${script.model}`;
  const ai = genkit({
    plugins: [
      openAICompatible({
        name: 'local',
        apiKey: 'test-key',
        baseURL: baseUrl,
        maxRetries: 0,
        fetch: fetchFirstRole, // the openai client's stream helper needs a chunk's role too
        initializer: async (client) => [
          defineCompatOpenAIModel({
            name,
            client,
            modelRef: compatOaiModelRef({ name }),
            pluginOptions: { name: 'local' },
          }),
        ],
      }),
    ],
  });
  const tools = script.tools.map(({ function: fn }) =>
    ai.defineTool(
      { name: fn.name, description: fn.description, inputJsonSchema: fn.parameters },
      async (input) => TOOL_FUNCTIONS[fn.name](input),
    ),
  );
  const agent = ai.defineFlow(AGENT_NAME, async ({ messages, request }) => {
    const options = { model: name, system: script.system, messages, prompt: request, tools, maxTurns: 8 };
    if (!stack.endsWith('-stream')) return (await ai.generate(options)).messages;
    const { stream, response } = ai.generateStream(options);
    for await (const _ of stream);
    return (await response).messages;
  });
  let messages = [];
  for (const request of script.requests) messages = await agent({ messages, request });
  await flushTracing();
});
