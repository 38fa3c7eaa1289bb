// OpenAI Codex CLI (`@openai/codex`, its native binary), run non-interactively (`codex exec`,
// approvals and sandbox off: the scripted model calls only the scenario's tools) once per
// turn of the scenario, each later turn resuming the session (`codex exec resume --last`),
// against the scripted server's Responses API (SSE) as a custom provider (`model_providers`
// in `$CODEX_HOME/config.toml`: `base_url`, `env_key`, `wire_api = "responses"`). Its OTel
// export is on (`[otel]`: `exporter` and `trace_exporter` OTLP/HTTP protobuf to a loopback
// collector here, `log_user_prompt`); the scenario's tools come from an MCP server over
// stdio (`mcp_tools.mjs`, `[mcp_servers.tools]`; Codex offers them in a Responses
// `namespace` tool `mcp__tools`). CODEX_HOME is a fixed folder per scenario: the requests
// name paths under it. Settings: github.com/openai/codex `docs/config.md`.
//
// `codex-cli-openinference`: the CLI's telemetry goes to OpenInference's interceptor
// (`codex-otlp-interceptor`, openinference-instrumentation-codex, in the Python environment
// `.stacks/codex-cli-openinference`) on a loopback port, which exports its own `codex.turn`
// traces to the collector here; the recording is the interceptor's output alone.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli, withJsonReceiver } from './cli_common.mjs';
import { main } from './common.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MODEL = 'gpt-4o-mini';
const BINARY = path.join(HERE, '..', 'node_modules', '@openai', `codex-linux-${os.arch()}`,
  'vendor', `${os.arch() === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-musl`, 'bin', 'codex');

const toml = JSON.stringify; // a TOML basic string is a JSON string

await main(async ({ stack, scenario, baseUrl, out, script }) => {
  const home = path.join(os.tmpdir(), 'turnscore-codex-cli', scenario);
  fs.rmSync(home, { recursive: true, force: true });
  fs.mkdirSync(home, { recursive: true });
  try {
    await withJsonReceiver(out, scenario, async (receiver) => {
      const intercepted = stack.endsWith('-openinference');
      const interceptor = intercepted ? await startInterceptor(home, receiver) : null;
      const collector = interceptor ? interceptor.url : receiver;
      const toolsFile = path.join(home, 'tools.json');
      fs.writeFileSync(toolsFile, JSON.stringify(script.tools));
      fs.writeFileSync(path.join(home, 'config.toml'), [
        `model = ${toml(MODEL)}`,
        'model_provider = "wire"',
        'approval_policy = "never"',
        '[model_providers.wire]',
        'name = "wire"',
        `base_url = ${toml(baseUrl)}`, // ends in /v1 (`record.drive`)
        'env_key = "WIRE_API_KEY"',
        'wire_api = "responses"',
        '[otel]',
        'environment = "test"',
        'log_user_prompt = true',
        `exporter = { otlp-http = { endpoint = ${toml(`${collector}/v1/logs`)}, protocol = "binary" } }`,
        `trace_exporter = { otlp-http = { endpoint = ${toml(`${collector}/v1/traces`)}, protocol = "binary" } }`,
        '[mcp_servers.tools]',
        'command = "node"',
        `args = [${toml(path.join(HERE, 'mcp_tools.mjs'))}, ${toml(toolsFile)}]`,
        '',
      ].join('\n'));
      const env = { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, WIRE_API_KEY: 'test-key' };
      const flags = ['--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox'];
      for (const [turn, request] of script.requests.entries()) {
        const args = turn ? ['exec', 'resume', '--last', ...flags, request] : ['exec', ...flags, request];
        await runCli(BINARY, args, { cwd: home, env });
      }
      if (interceptor) await interceptor.stop();
    });
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
});

// OpenInference's interceptor, listening on a free loopback port, exporting to `receiver`:
// its `codex.turn` spans held until its exit (a completed turn waits for its logs, which
// the CLI sends after its spans), then flushed.
async function startInterceptor(home, receiver) {
  const port = await freePort();
  const config = path.join(home, 'interceptor.toml');
  fs.writeFileSync(config, [
    '[sink]',
    `endpoint = ${toml(`${receiver}/v1/traces`)}`,
    'protocol = "http/protobuf"',
    '[server]',
    'host = "127.0.0.1"',
    `port = ${port}`,
    'completion_flush_delay_seconds = 600',
    '',
  ].join('\n'));
  const python = path.join(process.cwd(), '.stacks', 'codex-cli-openinference', 'bin', 'python');
  const child = spawn(python, ['-m', 'openinference.instrumentation.codex.native_otlp_interceptor',
    '--config', config], { stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((resolve) => child.on('close', resolve));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch { /* not listening yet */ }
    if (i > 100) throw new Error('codex-otlp-interceptor did not become ready');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) throw new Error(`codex-otlp-interceptor exited ${code}`);
    },
  };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
