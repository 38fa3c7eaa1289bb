// Gemini CLI (`@google/gemini-cli`), run non-interactively (`-p`, `--yolo`) once per turn
// of the scenario, each later turn resuming the session (`--resume latest`), against the
// scripted server's Gemini API (`GOOGLE_GEMINI_BASE_URL`, an API key), in a temporary HOME
// (a fixed folder per scenario) whose `.gemini/settings.json` turns its telemetry on (`telemetry`: enabled, target local,
// `otlpEndpoint` a loopback collector here, `otlpProtocol` http, `logPrompts`) and offers
// the scenario's tools from an MCP server over stdio (`mcp_tools.mjs`; the CLI names them
// `mcp_<server>_<tool>`). Its OTLP/HTTP exporters send JSON, chunked: the collector writes
// each body as `<scenario>-NNN.traces.json` / `.logs.json`. Settings:
// geminicli.com/docs/cli/telemetry, geminicli.com/docs/cli/configuration.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli, withJsonReceiver } from './cli_common.mjs';
import { main } from './common.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MODEL = 'gemini-2.5-flash';

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
        await runCli('node', args, { cwd: home, env });
      }
    });
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
});
