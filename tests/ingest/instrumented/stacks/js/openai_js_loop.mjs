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
// `openlit-js...`: OpenLIT's Node SDK (`openlit`) as its README sets it up, `openlit.init` with
// an OTLP endpoint (a local receiver here) and the `openai` module handed over
// (`instrumentations`, for an ESM app), its own tracer and logger providers exporting there.
// No agent, no session: one trace per model call.
// `langfuse-js...`: Langfuse's JS SDK v5: the client wrapped with `observeOpenAI`
// (`@langfuse/openai`), each turn an `agent` observation (`@langfuse/tracing`'s
// `startActiveObservation`, the request in, the answer out) in the conversation's session
// (`propagateAttributes`), each tool function an `observe`d `tool` observation;
// `LangfuseSpanProcessor` (`@langfuse/otel`) on the provider with its export discarded, the
// file exporter's processor beside it, as `langfuse_agent.py` records the Python SDK.

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
  withReceiver,
} from './common.mjs';


// What the model is told: the result as JSON text, or the error the tool threw.
async function runTool(name, args, functions = TOOL_FUNCTIONS) {
  try {
    return toolText(await functions[name](JSON.parse(args)));
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
        input.push({ type: 'function_call_output', call_id, output: await runTool(name, args) });
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

// One turn of the chat completions loop: calls until the model answers without tools; the
// answer's text.
async function chatTurn(client, script, messages, stream, functions) {
  for (let step = 0; step < 8; step++) {
    const message = await complete(
      client,
      { model: script.model, messages, tools: script.tools },
      stream,
    );
    messages.push(message);
    if (!message.tool_calls) return message.content;
    for (const { id, function: fn } of message.tool_calls) {
      const content = await runTool(fn.name, fn.arguments, functions);
      messages.push({ role: 'tool', tool_call_id: id, content });
    }
  }
  return null;
}

async function chatLoop(client, script, stream, turn = (request, run) => run(), functions) {
  const messages = [{ role: 'system', content: script.system }];
  for (const request of script.requests) {
    messages.push({ role: 'user', content: request });
    await turn(request, () => chatTurn(client, script, messages, stream, functions));
  }
}

// Langfuse's processor beside the file exporter's; its own export goes nowhere.
async function langfuseProcessors() {
  const { LangfuseSpanProcessor } = await import('@langfuse/otel');
  const { BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-node');
  const discard = {
    export: (spans, done) => done({ code: 0 }),
    shutdown: () => Promise.resolve(),
    forceFlush: () => Promise.resolve(),
  };
  return (exporter) => [
    new LangfuseSpanProcessor({
      exporter: discard,
      publicKey: 'pk-lf-local',
      secretKey: 'sk-lf-local',
      baseUrl: 'http://127.0.0.1:9',
    }),
    new BatchSpanProcessor(exporter, { maxQueueSize: 4096, maxExportBatchSize: 4096 }),
  ];
}

async function langfuseRun({ stack, scenario, baseUrl, out, script }) {
  const processors = await langfuseProcessors();
  await withProviders(stack, out, scenario, async () => {
    const { observeOpenAI } = await import('@langfuse/openai');
    const { observe, propagateAttributes, startActiveObservation } = await import(
      '@langfuse/tracing'
    );
    const OpenAI = (await import('openai')).default;
    const client = observeOpenAI(
      new OpenAI({ baseURL: baseUrl, apiKey: 'test-key', maxRetries: 0 }),
    );
    const functions = Object.fromEntries(
      Object.entries(TOOL_FUNCTIONS).map(([name, fn]) => [
        name,
        observe(fn, { name, asType: 'tool' }),
      ]),
    );
    const turn = (request, run) =>
      startActiveObservation(
        AGENT_NAME,
        async (agent) => {
          agent.update({ input: request });
          agent.update({ output: await run() });
        },
        { asType: 'agent' },
      );
    await propagateAttributes({ sessionId: `sess-${stack}-${scenario}` }, () =>
      chatLoop(client, script, stack.endsWith('-stream'), turn, functions),
    );
  }, processors);
}

// OpenLIT exports to the endpoint it is given; its providers are the global ones it made.
async function openlitRun({ stack, scenario, baseUrl, out, script }) {
  await withReceiver(out, scenario, async (endpoint) => {
    // A CommonJS module whose `exports.default` is the SDK: ESM sees it one level down.
    const { default: openlitModule } = await import('openlit');
    const openlit = openlitModule.default ?? openlitModule;
    const openaiModule = await import('openai');
    openlit.init({
      otlpEndpoint: endpoint,
      applicationName: `stack-${stack}`,
      disableMetrics: true,
      // Its prices given, so it fetches none from GitHub (nothing leaves the machine).
      pricingJson: { chat: {}, embeddings: {} },
      instrumentations: { openai: openaiModule },
    });
    const client = new openaiModule.OpenAI({ baseURL: baseUrl, apiKey: 'test-key', maxRetries: 0 });
    try {
      await chatLoop(client, script, stack.endsWith('-stream'));
    } finally {
      const { trace } = await import('@opentelemetry/api');
      const { logs } = await import('@opentelemetry/api-logs');
      await trace.getTracerProvider().getDelegate().shutdown();
      await logs.getLoggerProvider().shutdown?.();
    }
  });
}

await main(async (run) => {
  const { stack, scenario, baseUrl, out, script } = run;
  if (stack.startsWith('langfuse-js')) return langfuseRun(run);
  if (stack.startsWith('openlit-js')) return openlitRun(run);
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
    await chatLoop(client, script, stream);
  });
});
