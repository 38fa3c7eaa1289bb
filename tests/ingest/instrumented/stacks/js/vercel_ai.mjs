// The Vercel AI SDK (`ai`) running the scenario's turns with `generateText` or `streamText`,
// tools and a multi-step loop (`stopWhen: isStepCount(8)`), on the OpenAI provider's chat
// completions model (`openai.chat`), traced by the SDK's OpenTelemetry integration
// (`@ai-sdk/otel`: `OpenTelemetry`, the GenAI conventions; `LegacyOpenTelemetry`, the `ai.*`
// spans of earlier releases). The conversation carries over turns as an app keeps it: the
// history plus the response messages of each call.

import { createOpenAI } from '@ai-sdk/openai';
import { LegacyOpenTelemetry, OpenTelemetry } from '@ai-sdk/otel';
import { generateText, isStepCount, jsonSchema, registerTelemetry, streamText, tool } from 'ai';
import { AGENT_NAME, TOOL_FUNCTIONS, main, withProviders } from './common.mjs';

const CONFIG = {
  'vercel-ai': { legacy: false, stream: false },
  'vercel-ai-stream': { legacy: false, stream: true },
  'vercel-ai-legacy': { legacy: true, stream: false },
  'vercel-ai-legacy-stream': { legacy: true, stream: true },
};

await main(async ({ stack, scenario, baseUrl, out, script }) => {
  const { legacy, stream } = CONFIG[stack];
  await withProviders(stack, out, scenario, async () => {
    registerTelemetry(legacy ? new LegacyOpenTelemetry() : new OpenTelemetry());
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
        stopWhen: isStepCount(8),
        maxRetries: 0,
        telemetry: { isEnabled: true, functionId: AGENT_NAME },
      };
      let response;
      if (stream) {
        const result = streamText(options);
        for await (const _ of result.textStream);
        response = await result.response;
      } else {
        response = (await generateText(options)).response;
      }
      messages.push(...response.messages);
    }
  });
});
