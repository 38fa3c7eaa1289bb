"""Pipecat (`pipecat-ai`) with its own OTel tracing (`pipecat.utils.tracing`): a pipeline
worker with `enable_tracing=True` and turn tracking (its default) makes a `conversation`
span, a `turn` span per turn of its `TurnTrackingObserver`, and an `llm` span per model call
of its `OpenAILLMService` (always streamed), with attributes of its own: `input` (the
request's messages as OpenAI JSON), `output` (the streamed text), `tools`,
`gen_ai.system_instructions`. Function calls run through `register_function` handlers; it
makes no span for them.

Text only, no audio transport: each user turn is what a transport and speech-to-text give
the pipeline, a `UserStartedSpeakingFrame` (the turn tracker starts a new turn on it once
the bot has spoken) and the user's message appended to the context (`LLMMessagesAppendFrame`,
run), then `UserStoppedSpeakingFrame`. `Speaker` stands in for the output transport: a
response with text makes the bot speak (`BotStartedSpeakingFrame`, `BotStoppedSpeakingFrame`
both ways, as the transport pushes them), which lets the tracker end the turn.

    pipecat (`pipecat`): the scenario's turns in one conversation.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented import scenarios
from tests.ingest.instrumented.stacks.common import main, providers

TURN_END_WAIT_S = 3.0
"""Longer than the turn tracker's `turn_end_timeout_secs` (2.5 s): how long the bot stays
silent before its turn ends, as after a real answer."""


def _tools_schema() -> Any:
    from pipecat.adapters.schemas.function_schema import FunctionSchema
    from pipecat.adapters.schemas.tools_schema import ToolsSchema

    return ToolsSchema(standard_tools=[
        FunctionSchema(name=t["function"]["name"], description=t["function"]["description"],
                       properties=t["function"]["parameters"]["properties"],
                       required=t["function"]["parameters"]["required"])
        for t in scenarios.TOOLS
    ])  # fmt: skip


def _handler(name: str) -> Any:
    """A function handler as an application writes one: run the tool, report its result;
    an exception is left to Pipecat (it tells the model the call failed)."""

    async def handle(params: Any) -> None:
        result = scenarios.TOOL_FUNCTIONS[name](**params.arguments)
        await params.result_callback(result)

    return handle


async def _converse(stack: str, scenario: str, base_url: str) -> None:
    from pipecat.frames.frames import (
        BotStartedSpeakingFrame,
        BotStoppedSpeakingFrame,
        EndFrame,
        Frame,
        LLMFullResponseEndFrame,
        LLMFullResponseStartFrame,
        LLMMessagesAppendFrame,
        LLMTextFrame,
        UserStartedSpeakingFrame,
        UserStoppedSpeakingFrame,
    )
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.runner import PipelineRunner
    from pipecat.pipeline.worker import PipelineWorker
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair
    from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
    from pipecat.services.openai.llm import OpenAILLMService

    answered = asyncio.Event()

    class Speaker(FrameProcessor):
        """The output transport's part: speak a response that has text."""

        def __init__(self) -> None:
            super().__init__()
            self._text = False

        async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
            await super().process_frame(frame, direction)
            await self.push_frame(frame, direction)
            if isinstance(frame, LLMFullResponseStartFrame):
                self._text = False
            elif isinstance(frame, LLMTextFrame) and frame.text:
                self._text = True
            elif isinstance(frame, LLMFullResponseEndFrame) and self._text:
                for said in (BotStartedSpeakingFrame(), BotStoppedSpeakingFrame()):
                    await self.push_frame(said)
                    await self.push_frame(type(said)(), FrameDirection.UPSTREAM)
                answered.set()

    llm = OpenAILLMService(
        api_key="test-key", base_url=base_url,
        settings=OpenAILLMService.Settings(model=scenarios.MODEL,
                                           system_instruction=scenarios.SYSTEM_PROMPT),
    )  # fmt: skip
    for name in scenarios.TOOL_FUNCTIONS:
        llm.register_function(name, _handler(name))
    context = LLMContext(tools=_tools_schema())
    aggregators = LLMContextAggregatorPair(context)
    pipeline = Pipeline([aggregators.user(), llm, Speaker(), aggregators.assistant()])
    worker = PipelineWorker(pipeline, enable_tracing=True,
                            conversation_id=f"sess-{stack}-{scenario}",
                            idle_timeout_secs=None)  # fmt: skip

    async def user() -> None:
        for turn in scenarios.SCENARIOS[scenario].turns:
            answered.clear()
            await worker.queue_frames([
                UserStartedSpeakingFrame(),
                LLMMessagesAppendFrame(messages=[{"role": "user", "content": turn.request}],
                                       run_llm=True),
                UserStoppedSpeakingFrame(),
            ])  # fmt: skip
            await asyncio.wait_for(answered.wait(), timeout=60)
            await asyncio.sleep(TURN_END_WAIT_S)
        await worker.queue_frame(EndFrame())

    runner = PipelineRunner(handle_sigint=False)
    await asyncio.gather(runner.run(worker), user())


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario):
        asyncio.run(_converse(stack, scenario, base_url))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
