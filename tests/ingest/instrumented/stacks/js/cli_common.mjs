// What the coding-CLI drivers share (`gemini_cli.mjs`, `codex_cli.mjs`): an OTLP/HTTP
// collector on 127.0.0.1 that takes protobuf or JSON, chunked or not (Node's exporters send
// JSON in chunks; Codex's Rust exporter protobuf), each body written as sent
// (`<scenario>-NNN.traces.pb|json`, `.logs.pb|json`), and the CLI run as a child process.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

// An OTLP/HTTP collector: each request body to /v1/traces or /v1/logs written as sent.
export async function withJsonReceiver(out, scenario, body) {
  fs.mkdirSync(out, { recursive: true });
  const counts = { traces: 0, logs: 0 };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const kind = req.url.endsWith('/v1/logs') ? 'logs' : req.url.endsWith('/v1/traces') ? 'traces' : null;
      const data = Buffer.concat(chunks);
      if (kind && data.length) {
        const json = (req.headers['content-type'] ?? '').includes('json');
        const name = `${scenario}-${String(counts[kind]++).padStart(3, '0')}.${kind}.${json ? 'json' : 'pb'}`;
        fs.writeFileSync(path.join(out, name), data);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await body(`http://127.0.0.1:${server.address().port}`);
  } finally {
    server.close();
  }
}

// A CLI as a child process; asynchronous, so that this process's collector answers it.
export function runCli(command, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.stdout.resume();
    const timer = setTimeout(() => child.kill(), 120000);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${command} exited ${code}: ${stderr.slice(-3000)}`));
    });
  });
}

