// A raw-client agent loop on the Anthropic Node SDK (`@anthropic-ai/sdk`, Messages API with
// tools, as `anthropic_loop.py` runs the Python one), each call plain or streamed (`-stream`:
// `messages.stream()` read to its final message), the client traced by OpenLLMetry's JS
// Anthropic instrumentation (`@traceloop/instrumentation-anthropic`) or OpenInference's
// (`@arizeai/openinference-instrumentation-anthropic`), each patched into the SDK's module with
// `manuallyInstrument`, as an ESM app without a loader hook does. A failed tool's result is
// sent with `is_error`. No agent, no session: one trace per model call. OpenLLMetry's
// (0.27.0) patches `Anthropic.Completions`, which SDK 1.x no longer has: it runs on the last
// 0.x SDK (its own environment), OpenInference's on the newest. `anthropic-js-sdk-otel`
// (`-stream`): no instrumentation, the SDK tracing itself alone (its `openTelemetry` option,
// `traces.contentMode` 'content'; `internal/tracing.mjs`, `lib/internal/tracing/`).

import * as AnthropicModule from '@anthropic-ai/sdk';
import { TOOL_FUNCTIONS, main, withProviders } from './common.mjs';

const MODEL = 'claude-sonnet-4-5';

async function instrument(stack, tracerProvider) {
  if (stack.includes('sdk-otel')) return;
  if (stack.includes('openllmetry')) {
    const { AnthropicInstrumentation } = await import('@traceloop/instrumentation-anthropic');
    const instrumentation = new AnthropicInstrumentation({ traceContent: true });
    instrumentation.setTracerProvider(tracerProvider);
    instrumentation.manuallyInstrument(AnthropicModule);
    return;
  }
  const { AnthropicInstrumentation } = await import(
    '@arizeai/openinference-instrumentation-anthropic'
  );
  new AnthropicInstrumentation({ tracerProvider }).manuallyInstrument(AnthropicModule);
}

function runTool(name, input) {
  try {
    const result = TOOL_FUNCTIONS[name](input);
    return [typeof result === 'string' ? result : JSON.stringify(result), false];
  } catch (error) {
    return [`${error.name}: ${error.message}`, true];
  }
}

await main(async ({ stack, scenario, baseUrl, out, script }) => {
  await withProviders(stack, out, scenario, async (tracerProvider) => {
    await instrument(stack, tracerProvider);
    const client = new AnthropicModule.Anthropic({
      baseURL: baseUrl,
      apiKey: 'test-key',
      maxRetries: 0,
      ...(stack.includes('sdk-otel') ? { openTelemetry: { traces: { contentMode: 'content' } } } : {}),
    });
    const tools = script.tools.map(({ function: fn }) => ({
      name: fn.name,
      description: fn.description,
      input_schema: fn.parameters,
    }));
    const stream = stack.endsWith('-stream');
    const messages = [];
    for (const request of script.requests) {
      messages.push({ role: 'user', content: request });
      for (let step = 0; step < 8; step++) {
        const params = { model: MODEL, max_tokens: 1024, system: script.system, messages, tools };
        const reply = stream
          ? await client.messages.stream(params).finalMessage()
          : await client.messages.create(params);
        messages.push({ role: 'assistant', content: reply.content });
        const uses = reply.content.filter((block) => block.type === 'tool_use');
        if (!uses.length) break;
        messages.push({
          role: 'user',
          content: uses.map(({ id, name, input }) => {
            const [content, failed] = runTool(name, input);
            return { type: 'tool_result', tool_use_id: id, content, ...(failed ? { is_error: true } : {}) };
          }),
        });
      }
    }
  });
});
