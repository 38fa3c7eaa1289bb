// LangGraph.js's prebuilt ReAct agent (`createReactAgent`) on LangChain's `ChatOpenAI` (chat
// completions), traced by OpenInference's LangChain.js instrumentation
// (`@arizeai/openinference-instrumentation-langchain`) or OpenLLMetry's
// (`@traceloop/instrumentation-langchain`), each patched into LangChain's callback manager
// with `manuallyInstrument`, as an ESM app without a loader hook does. `-stream` runs the
// graph with `streamMode: 'messages'`, so the chat model streams its tokens. The
// conversation carries over turns as the graph returns it (the state's messages).
// `-openai` stacks (their own environment, `langgraph-js-openai`) add the same vendor's
// OpenAI instrumentation on the `openai` module ChatOpenAI calls (`instrumentClient`): each
// model call is then a LangChain LLM span and a client span both.

import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import {
  AGENT_NAME,
  TOOL_FUNCTIONS,
  fetchFirstRole,
  instrumentClient,
  main,
  withProviders,
} from './common.mjs';

async function instrument(stack, tracerProvider) {
  if (stack.includes('-openai')) {
    const OpenAI = (await import('openai')).default;
    await instrumentClient(stack, tracerProvider, OpenAI, 'openai', 'OpenAIInstrumentation');
  }
  if (stack.includes('openllmetry')) {
    const { LangChainInstrumentation } = await import('@traceloop/instrumentation-langchain');
    const instrumentation = new LangChainInstrumentation({ traceContent: true });
    instrumentation.setTracerProvider(tracerProvider);
    instrumentation.manuallyInstrument({ callbackManagerModule: CallbackManagerModule });
    return;
  }
  const { LangChainInstrumentation } = await import(
    '@arizeai/openinference-instrumentation-langchain'
  );
  new LangChainInstrumentation({ tracerProvider }).manuallyInstrument(CallbackManagerModule);
}

await main(async ({ stack, scenario, baseUrl, out, script }) => {
  await withProviders(stack, out, scenario, async (tracerProvider) => {
    await instrument(stack, tracerProvider);
    const { ChatOpenAI } = await import('@langchain/openai');
    const { tool } = await import('@langchain/core/tools');
    const { createReactAgent } = await import('@langchain/langgraph/prebuilt');
    const llm = new ChatOpenAI({
      model: script.model,
      apiKey: 'test-key',
      configuration: { baseURL: baseUrl, fetch: fetchFirstRole },
      maxRetries: 0,
    });
    const tools = script.tools.map(({ function: fn }) =>
      tool(
        async (input) => {
          const result = TOOL_FUNCTIONS[fn.name](input);
          return typeof result === 'string' ? result : JSON.stringify(result);
        },
        { name: fn.name, description: fn.description, schema: fn.parameters },
      ),
    );
    const agent = createReactAgent({ llm, tools, prompt: script.system, name: AGENT_NAME });
    let messages = [];
    for (const request of script.requests) {
      const input = { messages: [...messages, { role: 'user', content: request }] };
      if (stack.endsWith('-stream')) {
        // Token by token (`streamMode: 'messages'`), the graph's state kept from `values`.
        const stream = await agent.stream(input, { streamMode: ['messages', 'values'] });
        for await (const [mode, chunk] of stream) if (mode === 'values') messages = chunk.messages;
      } else {
        messages = (await agent.invoke(input)).messages;
      }
    }
  });
});
