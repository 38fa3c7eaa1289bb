// A raw-client agent loop on the `openai` Node SDK (chat completions with tools, as
// `openai_loop.py` runs the Python one), each call plain or streamed (`-stream`: the chunks
// read and joined as an app joins them, usage asked for), the client traced by OpenLLMetry's
// JS OpenAI instrumentation (`@traceloop/instrumentation-openai`) or OpenInference's
// (`@arizeai/openinference-instrumentation-openai`), as `common.mjs`'s `instrumentClient`
// patches either in. No agent, no session: one trace per model call.

import OpenAI from 'openai';
import { TOOL_FUNCTIONS, instrumentClient, main, toolText, withProviders } from './common.mjs';

// What the model is told: the result as JSON text, or the error the tool threw.
function runTool(name, args) {
  try {
    return toolText(TOOL_FUNCTIONS[name](JSON.parse(args)));
  } catch (error) {
    return `${error.name}: ${error.message}`;
  }
}

// One model call; the assistant message as the next request carries it.
async function complete(client, request, stream) {
  if (!stream) {
    const { role, content, tool_calls } = (await client.chat.completions.create(request))
      .choices[0].message;
    return { role, content, ...(tool_calls?.length ? { tool_calls } : {}) };
  }
  const chunks = await client.chat.completions.create({
    ...request,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  const calls = new Map();
  for await (const chunk of chunks) {
    for (const { delta } of chunk.choices) {
      text += delta.content ?? '';
      for (const part of delta.tool_calls ?? []) {
        if (!calls.has(part.index)) {
          calls.set(part.index, { type: 'function', function: { name: '', arguments: '' } });
        }
        const call = calls.get(part.index);
        call.id = part.id ?? call.id;
        call.function.name += part.function?.name ?? '';
        call.function.arguments += part.function?.arguments ?? '';
      }
    }
  }
  const message = { role: 'assistant', content: text || null };
  if (calls.size) message.tool_calls = [...calls.keys()].sort((a, b) => a - b).map((k) => calls.get(k));
  return message;
}

await main(async ({ stack, scenario, baseUrl, out, script }) => {
  await withProviders(stack, out, scenario, async (tracerProvider) => {
    await instrumentClient(stack, tracerProvider, OpenAI, 'openai', 'OpenAIInstrumentation');
    const client = new OpenAI({ baseURL: baseUrl, apiKey: 'test-key', maxRetries: 0 });
    const stream = stack.endsWith('-stream');
    const messages = [{ role: 'system', content: script.system }];
    for (const request of script.requests) {
      messages.push({ role: 'user', content: request });
      for (let step = 0; step < 8; step++) {
        const message = await complete(
          client,
          { model: script.model, messages, tools: script.tools },
          stream,
        );
        messages.push(message);
        if (!message.tool_calls) break;
        for (const { id, function: fn } of message.tool_calls) {
          messages.push({ role: 'tool', tool_call_id: id, content: runTool(fn.name, fn.arguments) });
        }
      }
    }
  });
});
