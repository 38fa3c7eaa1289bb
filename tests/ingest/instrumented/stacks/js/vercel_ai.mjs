// The Vercel AI SDK (`ai`) running the scenario's turns with `generateText` or `streamText`,
// tools and a multi-step loop (`stopWhen`), on the OpenAI provider's chat completions model
// (`openai.chat`). AI SDK 7 traces through an integration (`@ai-sdk/otel`: `OpenTelemetry`,
// the GenAI conventions; `LegacyOpenTelemetry`, the `ai.*` spans of earlier releases); AI SDK
// 6 through its built-in `experimental_telemetry` (the `ai.*` spans). With OpenInference's
// span processor (`@arizeai/openinference-vercel`, Phoenix's way for AI SDK 7) the GenAI
// spans get OpenInference attributes before export. With Langfuse's span processor
// (`@langfuse/otel`, Langfuse's way for the AI SDK) the GenAI spans are filtered, marked
// (environment, app root) and exported as Langfuse would send them, the file exporter in
// place of its OTLP/HTTP one (`exporter`, a parameter of the processor; the same spans,
// protobuf rather than JSON), each turn run under Langfuse's `propagateAttributes`
// (`@langfuse/tracing`) with the conversation's session id. With Traceloop's span processor
// (`@traceloop/node-server-sdk`'s `createSpanProcessor`, its way into an existing OTel setup;
// AI SDK 6's `experimental_telemetry`) the `ai.*` spans are rewritten at their end into
// OpenLLMetry's attributes (`gen_ai.prompt.N.*`, `gen_ai.completion.N.*`, tool spans as
// `traceloop.entity.*`) before export. The conversation carries
// over turns as an app keeps it: the history plus the response messages of each call.

import { createOpenAI } from '@ai-sdk/openai';
import * as ai from 'ai';
import { AGENT_NAME, TOOL_FUNCTIONS, main, withProviders } from './common.mjs';

const { generateText, jsonSchema, streamText, tool } = ai;

const CONFIG = {
  'vercel-ai': { legacy: false, stream: false },
  'vercel-ai-stream': { legacy: false, stream: true },
  'vercel-ai-legacy': { legacy: true, stream: false },
  'vercel-ai-legacy-stream': { legacy: true, stream: true },
  'vercel-ai-v6': { legacy: true, stream: false },
  'vercel-ai-v6-stream': { legacy: true, stream: true },
  'vercel-ai-openinference': { legacy: false, stream: false, openinference: true },
  'vercel-ai-openinference-stream': { legacy: false, stream: true, openinference: true },
  'vercel-ai-langfuse': { legacy: false, stream: false, langfuse: true },
  'vercel-ai-langfuse-stream': { legacy: false, stream: true, langfuse: true },
  'vercel-ai-traceloop': { legacy: true, stream: false, traceloop: true },
  'vercel-ai-traceloop-stream': { legacy: true, stream: true, traceloop: true },
};

await main(async ({ stack, scenario, baseUrl, out, script }) => {
  const { legacy, stream, openinference, langfuse, traceloop } = CONFIG[stack];
  let processor;
  if (openinference) {
    const { OpenInferenceSimpleSpanProcessor } = await import('@arizeai/openinference-vercel');
    processor = (exporter) => new OpenInferenceSimpleSpanProcessor({ exporter });
  } else if (langfuse) {
    const { LangfuseSpanProcessor } = await import('@langfuse/otel');
    processor = (exporter) =>
      new LangfuseSpanProcessor({
        exporter,
        publicKey: 'pk-lf-test',
        secretKey: 'sk-lf-test',
        baseUrl: 'http://127.0.0.1:1',
        flushAt: 4096,
      });
  } else if (traceloop) {
    const { createSpanProcessor } = await import('@traceloop/node-server-sdk');
    processor = (exporter) => createSpanProcessor({ exporter });
  }
  await withProviders(stack, out, scenario, async () => {
    // AI SDK 7 has registerTelemetry and isStepCount; 6 has neither (stepCountIs).
    const v7 = 'registerTelemetry' in ai;
    if (v7) {
      const otel = await import('@ai-sdk/otel');
      ai.registerTelemetry(legacy ? new otel.LegacyOpenTelemetry() : new otel.OpenTelemetry());
    }
    const telemetry = { isEnabled: true, functionId: AGENT_NAME };
    const openai = createOpenAI({ baseURL: baseUrl, apiKey: 'test-key' });
    const model = openai.chat(script.model);
    const tools = Object.fromEntries(
      script.tools.map(({ function: fn }) => [
        fn.name,
        tool({
          description: fn.description,
          inputSchema: jsonSchema(fn.parameters),
          execute: async (input) => TOOL_FUNCTIONS[fn.name](input),
        }),
      ]),
    );
    const messages = [];
    for (const request of script.requests) {
      messages.push({ role: 'user', content: request });
      const options = {
        model,
        system: script.system,
        messages,
        tools,
        stopWhen: v7 ? ai.isStepCount(8) : ai.stepCountIs(8),
        maxRetries: 0,
        ...(v7 ? { telemetry } : { experimental_telemetry: telemetry }),
      };
      const reply = async () => {
        if (!stream) return (await generateText(options)).response;
        const result = streamText(options);
        for await (const _ of result.textStream);
        return await result.response;
      };
      const response = langfuse
        ? await (await import('@langfuse/tracing')).propagateAttributes(
            { sessionId: `sess-${stack}-${scenario}` },
            reply,
          )
        : await reply();
      messages.push(...response.messages);
    }
  }, processor);
});
