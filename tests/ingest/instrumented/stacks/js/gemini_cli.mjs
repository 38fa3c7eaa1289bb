// Gemini CLI (`@google/gemini-cli`), run non-interactively (`-p`, `--yolo`) once per turn
// of the scenario, each later turn resuming the session (`--resume latest`), against the
// scripted server's Gemini API (`GOOGLE_GEMINI_BASE_URL`, an API key), in a temporary HOME
// (a fixed folder per scenario) whose `.gemini/settings.json` turns its telemetry on (`telemetry`: enabled, target local,
// `otlpEndpoint` a loopback collector here, `otlpProtocol` http, `logPrompts`) and offers
// the scenario's tools from an MCP server over stdio (`mcp_tools.mjs`; the CLI names them
// `mcp_<server>_<tool>`). Its OTLP/HTTP exporters send JSON, chunked: the collector writes
// each body as `<scenario>-NNN.traces.json` / `.logs.json`. Settings:
// geminicli.com/docs/cli/telemetry, geminicli.com/docs/cli/configuration.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from './common.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MODEL = 'gemini-2.5-flash';

async function withJsonReceiver(out, scenario, body) {
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

// The CLI as a child process; asynchronous, so that this process's collector answers it.
function run(args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn('node', args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.stdout.resume();
    const timer = setTimeout(() => child.kill(), 120000);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`gemini exited ${code}: ${stderr.slice(-3000)}`));
    });
  });
}

await main(async ({ scenario, baseUrl, out, script }) => {
  // A fixed HOME per scenario: the CLI's system prompt names paths under it, and the
  // wire (the expected turns) must be the same on every run.
  const home = path.join(os.tmpdir(), 'turnscore-gemini-cli', scenario);
  fs.rmSync(home, { recursive: true, force: true });
  fs.mkdirSync(home, { recursive: true });
  try {
    await withJsonReceiver(out, scenario, async (collector) => {
      const toolsFile = path.join(home, 'tools.json');
      fs.writeFileSync(toolsFile, JSON.stringify(script.tools));
      fs.mkdirSync(path.join(home, '.gemini'));
      fs.writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify({
        telemetry: { enabled: true, target: 'local', otlpEndpoint: collector, otlpProtocol: 'http',
                     logPrompts: true },
        security: { auth: { selectedType: 'gemini-api-key' } },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        privacy: { usageStatisticsEnabled: false },
        mcpServers: { tools: { command: 'node', args: [path.join(HERE, 'mcp_tools.mjs'), toolsFile],
                               trust: true } },
      }));
      const cli = path.join(HERE, '..', 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');
      const env = { PATH: process.env.PATH, HOME: home, GEMINI_API_KEY: 'test-key',
                    GOOGLE_GEMINI_BASE_URL: baseUrl, GEMINI_CLI_TRUST_WORKSPACE: 'true',
                    NO_BROWSER: '1' };
      for (const [turn, request] of script.requests.entries()) {
        const args = [cli, '-p', request, '--yolo', '-m', MODEL, ...(turn ? ['--resume', 'latest'] : [])];
        await run(args, { cwd: home, env });
      }
    });
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
});
