// Qwen Code (`@qwen-code/qwen-code`, a fork of Gemini CLI that talks to OpenAI-compatible
// APIs), run non-interactively (a positional prompt, `--yolo`) once per turn of the
// scenario, each later turn resuming the session (`--continue`), against the scripted
// server's OpenAI Chat Completions API (`OPENAI_BASE_URL`, `OPENAI_API_KEY`,
// `security.auth.selectedType: openai`), in a temporary HOME (a fixed folder per scenario:
// the system prompt names paths under it) whose `.qwen/settings.json` turns its telemetry
// on (`telemetry`: enabled, target local, `otlpEndpoint` a loopback collector here,
// `otlpProtocol` http, `logPrompts`) and offers the scenario's tools from an MCP server
// over stdio (`mcp_tools.mjs`; the CLI names them `mcp__<server>__<tool>`; `alwaysLoadTools`, or
// it defers them behind its `tool_search` tool). Its OTLP/HTTP
// exporters send JSON: the collector writes each body as `<scenario>-NNN.traces.json` /
// `.logs.json`. Settings: qwenlm.github.io/qwen-code-docs (telemetry, settings); the
// bundle's `resolveTelemetrySettings`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli, withJsonReceiver } from './cli_common.mjs';
import { main } from './common.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MODEL = 'gpt-4o-mini';

await main(async ({ scenario, baseUrl, out, script }) => {
  const home = path.join(os.tmpdir(), 'turnscore-qwen-code', scenario);
  fs.rmSync(home, { recursive: true, force: true });
  fs.mkdirSync(home, { recursive: true });
  try {
    await withJsonReceiver(out, scenario, async (collector) => {
      const toolsFile = path.join(home, 'tools.json');
      fs.writeFileSync(toolsFile, JSON.stringify(script.tools));
      fs.mkdirSync(path.join(home, '.qwen'));
      fs.writeFileSync(path.join(home, '.qwen', 'settings.json'), JSON.stringify({
        telemetry: { enabled: true, target: 'local', otlpEndpoint: collector, otlpProtocol: 'http',
                     logPrompts: true },
        security: { auth: { selectedType: 'openai' } },
        model: { name: MODEL },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        privacy: { usageStatisticsEnabled: false },
        // Its managed memory's background extraction (on by default) is a model call after
        // the answer, at the CLI's discretion (it ran in one scenario of five): off, so the
        // wire is the same on every run. Ingest reads such a call as no turn's
        // (`conventions/qwen_code.py`, `standalone`).
        memory: { enableManagedAutoMemory: false },
        mcpServers: { tools: { command: 'node', args: [path.join(HERE, 'mcp_tools.mjs'), toolsFile],
                               trust: true, alwaysLoadTools: true } },
      }));
      const cli = path.join(HERE, '..', 'node_modules', '@qwen-code', 'qwen-code', 'cli-entry.js');
      const env = { PATH: process.env.PATH, HOME: home, OPENAI_API_KEY: 'test-key',
                    OPENAI_BASE_URL: baseUrl, OPENAI_MODEL: MODEL, QWEN_CODE_TRUST_WORKSPACE: 'true',
                    NO_BROWSER: '1' };
      for (const [turn, request] of script.requests.entries()) {
        const args = [cli, request, '--yolo', '-m', MODEL, ...(turn ? ['--continue'] : [])];
        await runCli('node', args, { cwd: home, env });
      }
    });
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
});
