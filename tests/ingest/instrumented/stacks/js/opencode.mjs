// OpenCode (`opencode-ai`, its native binary), run non-interactively (`opencode run`,
// `--auto`: permissions approved) once per turn of the scenario, each later turn continuing
// the session (`--continue`), against the scripted server's OpenAI Chat Completions API as a
// custom OpenAI-compatible provider (`provider.wire`, `@ai-sdk/openai-compatible`, its
// `baseURL`), its OpenTelemetry option on (`experimental.openTelemetry`: the AI SDK's
// `experimental_telemetry` spans, exported by OTLP/HTTP to `OTEL_EXPORTER_OTLP_ENDPOINT`, a
// loopback collector here), the scenario's tools from an MCP server (`mcp.tools`, local,
// `mcp_tools.mjs`), in a temporary HOME (a fixed folder per scenario). The models.dev fetch,
// auto-update, sharing and default plugins are off: it contacts only the servers here.
// Settings: opencode.ai/docs/config, /docs/providers, /docs/mcp-servers.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli, withJsonReceiver } from './cli_common.mjs';
import { main } from './common.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MODEL = 'gpt-4o-mini';
const BINARY = path.join(HERE, '..', 'node_modules', `opencode-linux-${os.arch()}`, 'bin', 'opencode');

await main(async ({ scenario, baseUrl, out, script }) => {
  const home = path.join(os.tmpdir(), 'turnscore-opencode', scenario);
  fs.rmSync(home, { recursive: true, force: true });
  fs.mkdirSync(home, { recursive: true });
  try {
    await withJsonReceiver(out, scenario, async (collector) => {
      const toolsFile = path.join(home, 'tools.json');
      fs.writeFileSync(toolsFile, JSON.stringify(script.tools));
      const config = path.join(home, 'opencode.json');
      fs.writeFileSync(config, JSON.stringify({
        $schema: 'https://opencode.ai/config.json',
        model: `wire/${MODEL}`,
        provider: { wire: { npm: '@ai-sdk/openai-compatible', name: 'wire',
                            options: { baseURL: baseUrl, apiKey: 'test-key' },
                            models: { [MODEL]: { name: MODEL, tool_call: true } } } },
        mcp: { tools: { type: 'local', command: ['node', path.join(HERE, 'mcp_tools.mjs'), toolsFile],
                        enabled: true } },
        experimental: { openTelemetry: true },
        autoupdate: false,
        share: 'disabled',
      }));
      const env = { PATH: process.env.PATH, HOME: home, OPENCODE_CONFIG: config,
                    OTEL_EXPORTER_OTLP_ENDPOINT: collector, OPENCODE_DISABLE_MODELS_FETCH: '1',
                    OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_SHARE: '1',
                    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1' };
      for (const [turn, request] of script.requests.entries()) {
        // A title given: else its first model call is the title's (a small model's), not the
        // turn's. The prompt word by word: `run` joins its arguments with spaces and quotes
        // each that holds one, so a prompt given whole reaches the model in quotes.
        const args = ['run', '--auto', '-m', `wire/${MODEL}`, ...(turn ? ['--continue'] : ['--title', scenario]),
                      ...request.split(' ')];
        await runCli(BINARY, args, { cwd: home, env });
      }
    });
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
});
