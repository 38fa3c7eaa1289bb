// A Mastra `Agent` (its own agent loop, `generate` or `stream`, up to 8 steps) on the AI
// SDK's OpenAI chat completions model, traced by Mastra's observability and exported by its
// OTel exporter (`@mastra/otel-exporter`, OTLP/HTTP protobuf to a local receiver: the export
// is what a collector would get). The conversation carries over turns as an app without
// Mastra memory keeps it: the history plus each reply's response messages.

import { createOpenAI } from '@ai-sdk/openai';
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { z } from 'zod';
import { AGENT_NAME, TOOL_FUNCTIONS, main, withReceiver } from './common.mjs';

const STREAMED = new Set(['mastra-stream']);

// The corpus's tool schemas (`scenarios.TOOLS`) as a Mastra app writes them, in zod.
const SCHEMAS = {
  calculator: z.object({ expression: z.string() }),
  search_docs: z.object({ query: z.string(), top_k: z.number().int().default(3) }),
  get_weather: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']).optional() }),
};

await main(async ({ stack, scenario, baseUrl, out, script }) => {
  await withReceiver(out, scenario, async (endpoint) => {
    const tools = Object.fromEntries(
      script.tools.map(({ function: fn }) => [
        fn.name,
        createTool({
          id: fn.name,
          description: fn.description,
          inputSchema: SCHEMAS[fn.name],
          execute: async (input) => TOOL_FUNCTIONS[fn.name](input),
        }),
      ]),
    );
    const openai = createOpenAI({ baseURL: baseUrl, apiKey: 'test-key' });
    const exporter = new OtelExporter({
      provider: { custom: { endpoint, protocol: 'http/protobuf' } },
      batchSize: 4096,
    });
    const mastra = new Mastra({
      agents: {
        [AGENT_NAME]: new Agent({
          id: AGENT_NAME,
          name: AGENT_NAME,
          instructions: script.system,
          model: openai.chat(script.model),
          tools,
        }),
      },
      observability: new Observability({
        configs: { otel: { serviceName: `stack-${stack}`, exporters: [exporter] } },
      }),
      logger: false,
    });
    const agent = mastra.getAgent(AGENT_NAME);
    const messages = [];
    for (const request of script.requests) {
      messages.push({ role: 'user', content: request });
      const options = { maxSteps: 8, modelSettings: { maxRetries: 0 } };
      let response;
      if (STREAMED.has(stack)) {
        const result = await agent.stream(messages, options);
        for await (const _ of result.textStream);
        response = await result.response;
      } else {
        response = (await agent.generate(messages, options)).response;
      }
      messages.push(...response.messages);
    }
    await mastra.shutdown?.();
  });
});
