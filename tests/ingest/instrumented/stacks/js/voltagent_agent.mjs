// A VoltAgent `Agent` (`@voltagent/core`: its own loop over the AI SDK, `generateText` or
// `streamText`, its default in-memory conversation memory carrying the turns by
// `conversationId`) on the AI SDK's OpenAI chat completions model, registered with
// `VoltAgent` and traced by VoltAgent's observability (`VoltAgentObservability`, its own
// OTel tracer provider) with the file exporter as one more span processor, as its
// `spanProcessors` option lets an app add its own OTLP exporter. VoltOps sync is off
// (`sampling.strategy: 'never'`): no keys, nothing remote.

import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';
import { AGENT_NAME, FileSpanExporter, TOOL_FUNCTIONS, main } from './common.mjs';

const STREAMED = new Set(['voltagent-stream']);

// The corpus's tool schemas (`scenarios.TOOLS`) as a VoltAgent app writes them, in zod.
const SCHEMAS = {
  calculator: z.object({ expression: z.string() }),
  search_docs: z.object({ query: z.string(), top_k: z.number().int().default(3) }),
  get_weather: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']).optional() }),
};

await main(async ({ stack, scenario, baseUrl, out, script }) => {
  const { ProtobufTraceSerializer } = await import('@opentelemetry/otlp-transformer');
  const { BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { Agent, VoltAgent, VoltAgentObservability, createTool } = await import(
    '@voltagent/core'
  );
  const exporter = new FileSpanExporter(out, scenario, ProtobufTraceSerializer);
  const observability = new VoltAgentObservability({
    serviceName: `stack-${stack}`,
    spanProcessors: [
      new BatchSpanProcessor(exporter, { maxQueueSize: 4096, maxExportBatchSize: 4096 }),
    ],
    voltOpsSync: { sampling: { strategy: 'never' } },
  });
  const tools = script.tools.map(({ function: fn }) =>
    createTool({
      name: fn.name,
      description: fn.description,
      parameters: SCHEMAS[fn.name],
      execute: async (input) => TOOL_FUNCTIONS[fn.name](input),
    }),
  );
  const openai = createOpenAI({ baseURL: baseUrl, apiKey: 'test-key' });
  const agent = new Agent({
    name: AGENT_NAME,
    instructions: script.system,
    model: openai.chat(script.model),
    tools,
  });
  new VoltAgent({ agents: { [AGENT_NAME]: agent }, observability });
  const options = {
    userId: 'user',
    conversationId: `conv-${stack}-${scenario}`,
    maxSteps: 8,
    maxRetries: 0,
  };
  for (const request of script.requests) {
    if (STREAMED.has(stack)) {
      const result = await agent.streamText(request, options);
      for await (const _ of result.textStream);
      await result.text;
    } else {
      await agent.generateText(request, options);
    }
  }
  await observability.forceFlush?.();
  await observability.shutdown?.();
});
