// The scenario's tools as an MCP server over stdio (newline-delimited JSON-RPC, the MCP
// stdio transport), Node's standard library only: for a coding CLI that takes tools from
// MCP servers (Gemini CLI's `mcpServers`). Its argument: a JSON file of the tools (OpenAI
// function form); each call runs `TOOL_FUNCTIONS`, a thrown error a result with `isError`.
// A result whose text is JSON but not an object (a number, a list) comes with its value as
// `structuredContent` `{result}`: Gemini CLI's stdio transport otherwise sets
// `structuredContent` to the text parsed (`fixStructuredContent`), which the MCP SDK's
// schema (an object) then rejects, failing the call.
import fs from 'node:fs';
import readline from 'node:readline';
import { TOOL_FUNCTIONS, toolText } from './common.mjs';

const tools = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')).map((t) => ({
  name: t.function.name,
  description: t.function.description,
  inputSchema: t.function.parameters,
}));

function structured(text) {
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? {} : { structuredContent: { result: value } };
  } catch {
    return {};
  }
}

function answer(method, params) {
  if (method === 'initialize') {
    return {
      protocolVersion: params?.protocolVersion ?? '2025-06-18',
      capabilities: { tools: {} },
      serverInfo: { name: 'tools', version: '1.0.0' },
    };
  }
  if (method === 'tools/list') return { tools };
  if (method === 'tools/call') {
    try {
      const result = TOOL_FUNCTIONS[params.name](params.arguments ?? {});
      const text = toolText(result);
      return { content: [{ type: 'text', text }], isError: false, ...structured(text) };
    } catch (error) {
      return { content: [{ type: 'text', text: `Error: ${error.message}` }], isError: true };
    }
  }
  return {};
}

const lines = readline.createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (!line.trim()) return;
  const message = JSON.parse(line);
  if (message.id === undefined) return; // a notification
  const result = answer(message.method, message.params);
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: message.id, result })}\n`);
});
