// What every Node stack driver shares (the counterpart of `common.py`): the OTel JS SDK set
// up as an application sets it up (a global tracer provider and an AsyncLocalStorage context
// manager, so spans a library starts on its own are exported and nested), exporting OTLP
// protobuf files with the SDK's own serializer; or, for a framework that makes its own
// exporter from an endpoint (Mastra), a local OTLP/HTTP receiver writing what it is sent.
//
//     node .stacks/<env>/drivers/<driver>.mjs STACK SCENARIO BASE_URL OUT
//
// `record.py` runs it with `--preserve-symlinks(-main)` through `.stacks/<env>/drivers`, a link
// to this folder, so bare imports resolve in that environment's node_modules (imported where
// used: an environment has the OTel packages its stack needs, not all). The scenario
// (requests, system prompt, model, tool schemas) comes as JSON in TURNSCORE_SCENARIO, written
// by `record.py` from `scenarios.py`, the one source of the scripted conversations.

import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';

export const AGENT_NAME = 'research_assistant';

// What an OTLP/HTTP protobuf exporter would POST: one ExportTraceServiceRequest per batch,
// one file per batch (`<scenario>-NNN.traces.pb`, as `export.py`'s FileSpanExporter names them).
export class FileSpanExporter {
  constructor(folder, prefix, serializer) {
    this.serializer = serializer;
    this.folder = folder;
    this.prefix = prefix;
    this.count = 0;
    this.suffix = 'traces';
    fs.mkdirSync(folder, { recursive: true });
  }

  export(spans, done) {
    const name = `${this.prefix}-${String(this.count++).padStart(3, '0')}.${this.suffix}.pb`;
    fs.writeFileSync(path.join(this.folder, name), this.serializer.serializeRequest(spans));
    done({ code: 0 });
  }

  shutdown() {
    return Promise.resolve();
  }

  forceFlush() {
    return Promise.resolve();
  }
}

// `processor` makes the span processor from the file exporter, for a library that is one
// (OpenInference's Vercel processor), or a list of them (a library's processor beside the
// file exporter's); the SDK's BatchSpanProcessor otherwise.
export async function withProviders(stack, out, scenario, body, processor = undefined) {
  const { ProtobufTraceSerializer } = await import('@opentelemetry/otlp-transformer');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const exporter = new FileSpanExporter(out, scenario, ProtobufTraceSerializer);
  const resource = resourceFromAttributes({ 'service.name': `stack-${stack}` });
  const batch = { maxQueueSize: 4096, maxExportBatchSize: 4096 };
  let provider;
  try {
    // SDK 2.x, as its READMEs set it up: NodeTracerProvider.register() installs the
    // AsyncLocalStorage context manager and the global provider.
    const { BatchSpanProcessor, NodeTracerProvider } = await import(
      '@opentelemetry/sdk-trace-node'
    );
    const spanProcessors = [
      processor ? processor(exporter) : new BatchSpanProcessor(exporter, batch),
    ].flat();
    provider = new NodeTracerProvider({ resource, spanProcessors });
    provider.register();
  } catch (error) {
    if (error.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    // SDK 3.x: the provider, and the context manager from its own package.
    const { context, trace } = await import('@opentelemetry/api');
    const { AsyncLocalStorageContextManager } = await import(
      '@opentelemetry/context-async-hooks'
    );
    const { BatchSpanProcessor, TracerProvider } = await import('@opentelemetry/sdk-trace');
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const spanProcessors = [
      processor ? processor(exporter) : new BatchSpanProcessor({ exporter, ...batch }),
    ].flat();
    provider = new TracerProvider({ resource, spanProcessors });
    trace.setGlobalTracerProvider(provider);
  }
  try {
    await body(provider);
  } finally {
    await provider.shutdown();
  }
}

// `withProviders` with a logger provider beside the tracer provider, for an instrumentation
// that sends its content as log records (the OTel GenAI events): each batch an
// ExportLogsServiceRequest, `<scenario>-NNN.logs.pb`. SDK 2.x's processor takes the exporter,
// 3.x's an options object; the provider is passed to the instrumentation and registered
// globally, as an application's setup does.
export async function withLogProviders(stack, out, scenario, body) {
  const { ProtobufLogsSerializer } = await import('@opentelemetry/otlp-transformer');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const { BatchLogRecordProcessor, LoggerProvider } = await import('@opentelemetry/sdk-logs');
  const exporter = new FileSpanExporter(out, scenario, ProtobufLogsSerializer);
  exporter.suffix = 'logs';
  const resource = resourceFromAttributes({ 'service.name': `stack-${stack}` });
  // SDK 3.x is the one with `@opentelemetry/sdk-trace` (as `withProviders` tells them apart).
  const sdk3 = await import('@opentelemetry/sdk-trace').then(() => true, () => false);
  const processor = sdk3
    ? new BatchLogRecordProcessor({ exporter })
    : new BatchLogRecordProcessor(exporter);
  const loggerProvider = new LoggerProvider({ resource, processors: [processor] });
  await withProviders(stack, out, scenario, async (tracerProvider) => {
    try {
      await body(tracerProvider, loggerProvider);
    } finally {
      await loggerProvider.shutdown();
    }
  });
}

// An OTLP/HTTP collector on 127.0.0.1: each request body (an ExportTraceServiceRequest or
// ExportLogsServiceRequest) written as sent, `<scenario>-NNN.traces.pb` / `.logs.pb`, or
// `.traces.json` / `.logs.json` for OTLP/JSON (what `exporter-*-otlp-http` send, OpenLIT's).
export async function withReceiver(out, scenario, body) {
  fs.mkdirSync(out, { recursive: true });
  let count = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const kind = req.url.endsWith('/v1/logs') ? 'logs' : 'traces';
      const json = (req.headers['content-type'] ?? '').includes('json');
      if (!/\/v1\/(traces|logs)$/.test(req.url)) {
        res.writeHead(404).end();
        return;
      }
      const suffix = json ? 'json' : 'pb';
      const name = `${scenario}-${String(count++).padStart(3, '0')}.${kind}.${suffix}`;
      fs.writeFileSync(path.join(out, name), Buffer.concat(chunks));
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' })
        .end(json ? '{}' : undefined);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await body(`http://127.0.0.1:${server.address().port}`);
  } finally {
    server.close();
  }
}

// A model SDK's client traced by OpenLLMetry's JS instrumentation of it for a stack named
// `...openllmetry...` (`@traceloop/instrumentation-<library>`, content traced), else by
// OpenInference's (`@arizeai/openinference-instrumentation-<library>`): each exports
// `className`, and is patched into `module` (what the app imported of the SDK) with
// `manuallyInstrument`, as an ESM app without a loader hook does.
export async function instrumentClient(stack, tracerProvider, module, library, className) {
  if (stack.includes('openllmetry')) {
    const Instrumentation = (await import(`@traceloop/instrumentation-${library}`))[className];
    const instrumentation = new Instrumentation({ traceContent: true });
    instrumentation.setTracerProvider(tracerProvider);
    instrumentation.manuallyInstrument(module);
    return;
  }
  const Instrumentation = (await import(`@arizeai/openinference-instrumentation-${library}`))[
    className
  ];
  new Instrumentation({ tracerProvider }).manuallyInstrument(module);
}

// The OpenAI instrumentations that hook the module loader (`require-in-the-middle`) rather
// than patch a module handed to them: the OTel JS contrib one (`@opentelemetry/
// instrumentation-openai`) for a stack named `...-otel...`, or Elastic's, which it was donated
// from (`@elastic/opentelemetry-instrumentation-openai`), for `...-elastic...`.
const LOADER_HOOKED = {
  '-otel': '@opentelemetry/instrumentation-openai',
  '-elastic': '@elastic/opentelemetry-instrumentation-openai',
};

export function loaderHooked(stack) {
  return Object.keys(LOADER_HOOKED).find((tag) => stack.includes(tag));
}

// The `openai` SDK's OpenAI class under a loader-hooked instrumentation: the instrumentation
// enabled first (content captured as OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
// asks: on, or off for a `-nocontent` stack, the instrumentation's default; its records to
// the logger provider), then the SDK required, as a CommonJS app (or a framework it hands
// the client to) loads it.
export async function requireInstrumented(stack, tracerProvider, loggerProvider) {
  process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT = String(
    !stack.includes('-nocontent'),
  );
  const { OpenAIInstrumentation } = await import(LOADER_HOOKED[loaderHooked(stack)]);
  const instrumentation = new OpenAIInstrumentation();
  instrumentation.setTracerProvider(tracerProvider);
  instrumentation.setLoggerProvider(loggerProvider);
  // Its metric instruments are made when a meter provider is set (the contrib one records on
  // them unguarded); the API's global one, a no-op, as an app exporting no metrics has.
  const { metrics } = await import('@opentelemetry/api');
  instrumentation.setMeterProvider(metrics.getMeterProvider());
  const openai = createRequire(import.meta.url)('openai');
  return openai.OpenAI ?? openai.default ?? openai;
}

// A `fetch` for an OpenAI client whose stream parser needs what the scripted server leaves
// out: OpenAI's API names the role (`assistant`) in a completion's first chunk, tool calls
// or not, and LangChain.js's ChatOpenAI takes a stream's role from its deltas alone (a chunk
// with none is no AIMessageChunk, its tool calls lost); the server's chunks name it only
// beside text. The role is added to the first chunk's delta; nothing else changes.
export async function fetchFirstRole(input, init) {
  const response = await fetch(input, init);
  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    return response;
  }
  let first = true;
  let rest = '';
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const line = (text) => {
    if (!first || !text.startsWith('data: {')) return text;
    const chunk = JSON.parse(text.slice('data: '.length));
    if (!chunk.choices?.length) return text;
    first = false;
    for (const choice of chunk.choices) choice.delta = { role: 'assistant', ...choice.delta };
    return `data: ${JSON.stringify(chunk)}`;
  };
  const body = response.body.pipeThrough(
    new TransformStream({
      transform(bytes, controller) {
        const lines = (rest + decoder.decode(bytes, { stream: true })).split('\n');
        rest = lines.pop();
        for (const text of lines) controller.enqueue(encoder.encode(`${line(text)}\n`));
      },
      flush(controller) {
        if (rest) controller.enqueue(encoder.encode(line(rest)));
      },
    }),
  );
  return new Response(body, { status: response.status, headers: response.headers });
}

// The corpus's three tools (`scenarios.py`), as the model's tools run them: a failing tool
// throws, and the framework reports the error its own way.
const DOCS = [
  { id: 'rate-01', title: 'Rate limits', snippet: 'Each API key may send 60 requests per minute.' },
  {
    id: 'auth-01',
    title: 'Authentication',
    snippet: 'Send your API key as a bearer token in the Authorization header.',
  },
];
const WEATHER = { Paris: { temperature: 18, conditions: 'cloudy' } };

export const TOOL_FUNCTIONS = {
  calculator({ expression }) {
    if (!/^[\d\s+\-*/().]+$/.test(expression)) {
      throw new Error(`Unsupported expression: ${expression}`);
    }
    return String(Function(`"use strict"; return (${expression});`)());
  },
  search_docs({ query, top_k = 3 }) {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    return DOCS.map((doc) => ({
      ...doc,
      score: words.filter((w) => doc.title.toLowerCase().includes(w)).length,
    }))
      .filter((hit) => hit.score)
      .slice(0, top_k);
  },
  get_weather({ city, unit = 'celsius' }) {
    if (!(city in WEATHER)) throw new Error(`Unknown city: ${city}`);
    return { city, ...WEATHER[city], unit };
  },
};

// What the model is told of a tool's result: the text it returned, or its value as JSON.
export function toolText(result) {
  return typeof result === 'string' ? result : JSON.stringify(result);
}

export async function main(run) {
  const [stack, scenario, baseUrl, out] = process.argv.slice(2);
  const script = JSON.parse(process.env.TURNSCORE_SCENARIO);
  await run({ stack, scenario, baseUrl, out, script });
}
