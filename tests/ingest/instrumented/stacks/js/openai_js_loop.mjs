// A raw-client agent loop on the `openai` Node SDK (chat completions with tools, as
// `openai_loop.py` runs the Python one), each call plain or streamed (`-stream`: the chunks
// read and joined as an app joins them, usage asked for), the client traced by OpenLLMetry's
// JS OpenAI instrumentation (`@traceloop/instrumentation-openai`) or OpenInference's
// (`@arizeai/openinference-instrumentation-openai`), as `common.mjs`'s `instrumentClient`
// patches either in; or by the OTel JS contrib instrumentation (`@opentelemetry/
// instrumentation-openai`, `openai-js-otel...`) or Elastic's, the one it was donated from
// (`@elastic/opentelemetry-instrumentation-openai`, `openai-js-elastic...`): these hook the
// module loader (`require-in-the-middle`), so they are enabled first and the SDK is then
// required, as a CommonJS app loads it; their content goes out as log records (the GenAI
// events), captured when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is true.
// `-responses` stacks run the loop on the Responses API (`client.responses.create`, the
// function calls and their outputs as input items), which the contrib instrumentation
// reports as one `gen_ai.client.inference.operation.details` record per call.
// No agent, no session: one trace per model call.

import {
  TOOL_FUNCTIONS,
  instrumentClient,
  loaderHooked,
  main,
  requireInstrumented,
  toolText,
  withLogProviders,
  withProviders,
} from './common.mjs';


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

// One Responses API call; the output items the next request's input carries, and the
// function calls among them. A stream's items come whole in its `response.completed` event.
async function respond(client, request, stream) {
  if (!stream) return (await client.responses.create(request)).output;
  let output = [];
  for await (const event of await client.responses.create({ ...request, stream: true })) {
    if (event.type === 'response.completed') output = event.response.output;
  }
  return output;
}

async function responsesLoop(client, script, stream) {
  const input = [];
  const tools = script.tools.map(({ function: fn }) => ({ type: 'function', ...fn }));
  for (const request of script.requests) {
    input.push({ role: 'user', content: request });
    for (let step = 0; step < 8; step++) {
      const output = await respond(
        client,
        { model: script.model, instructions: script.system, input, tools },
        stream,
      );
      input.push(...output);
      const calls = output.filter((item) => item.type === 'function_call');
      if (!calls.length) break;
      for (const { call_id, name, arguments: args } of calls) {
        input.push({ type: 'function_call_output', call_id, output: runTool(name, args) });
      }
    }
  }
}

// The SDK patched by the stack's instrumentation.
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
    const client = new OpenAI({ baseURL: baseUrl, apiKey: 'test-key', maxRetries: 0 });
    const stream = stack.endsWith('-stream');
    if (stack.includes('-responses')) {
      await responsesLoop(client, script, stream);
      return;
    }
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
