"""Structured output for judge endpoints, and one model call in the form the endpoint takes.

`structured_output = "auto"`: an endpoint is first asked for `response_format: json_schema`
(OpenAI, Azure OpenAI from api-version 2024-08-01-preview, vLLM, Ollama and llama.cpp's
server honour it); a 400 naming the format (OpenAI and Azure set `param: response_format`,
vLLM and llama.cpp name it in the message) moves it to `json_object`, then to the prompt
alone; a reply that ignores the format (prose before the JSON, as older Ollama builds send)
moves it to the prompt alone; prose with no JSON at all (a refusal) does not. Each move holds
for the rest of the run and is reported once through `note`. `true` and `false` force one
form and never move.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from turnscore.scorers.base import Usage
from turnscore.scorers.judge.client import ChatClient, ChatReply, JudgeRequestError, Message
from turnscore.scorers.judge.config import JudgeConfig
from turnscore.scorers.judge.parse import excerpt, json_objects


@dataclass(slots=True)
class Spend:
    """What one turn's judging has used so far, kept even when it ends in a failure."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_ms: float = 0.0
    attempts: int = 0

    def add(self, reply: ChatReply) -> None:
        self.latency_ms += reply.latency_ms
        self.attempts += reply.attempts
        if reply.input_tokens is not None:
            self.input_tokens = (self.input_tokens or 0) + reply.input_tokens
        if reply.output_tokens is not None:
            self.output_tokens = (self.output_tokens or 0) + reply.output_tokens

    def usage(self, config: JudgeConfig) -> Usage:
        return Usage(self.input_tokens, self.output_tokens,
                     config.cost(self.input_tokens, self.output_tokens), self.latency_ms,
                     self.attempts)


class Format(StrEnum):
    """What a judge endpoint is asked for, strongest first (the order `auto` falls back in)."""

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT = "json_object"
    PROMPT = "prompt"


def response_format(scorer: str, schema: Mapping[str, object],
                    form: Format = Format.JSON_SCHEMA) -> dict[str, object] | None:
    if form is Format.JSON_SCHEMA:
        return {"type": "json_schema", "json_schema": {
            "name": f"{scorer}_verdict", "schema": dict(schema), "strict": True}}
    return {"type": "json_object"} if form is Format.JSON_OBJECT else None


@dataclass(slots=True)
class FormatState:
    """The form one endpoint gets in this run; only `auto` moves it."""

    form: Format
    auto: bool

    @classmethod
    def of(cls, config: JudgeConfig) -> FormatState:
        if config.structured_output == "auto":
            return cls(Format.JSON_SCHEMA, auto=True)
        return cls(Format.JSON_SCHEMA if config.structured_output else Format.PROMPT, False)


def prose_before_json(text: str | None) -> str | None:
    """The prose a reply puts before a JSON object, which shows the format was not applied;
    None otherwise. An empty or cut-off reply (max_tokens reached) and prose with no JSON at
    all (a refusal) say nothing about the format."""
    text = (text or "").strip()
    if text.startswith("{"):
        return None
    found = json_objects(text)
    return text[: found[0][0]].strip() if found else None


async def ask(client: ChatClient, state: FormatState, scorer: str,
              schema: Mapping[str, object], messages: Sequence[Message],
              tools: Sequence[Mapping[str, object]] | None, spend: Spend,
              note: Callable[[str], None]) -> ChatReply:
    """One model call in the endpoint's current form, falling back as `auto` allows."""
    while True:
        form = state.form
        try:
            fmt = response_format(scorer, schema, form)
            reply = await client.complete(messages, response_format=fmt, tools=tools)
        except JudgeRequestError as exc:
            if not (state.auto and form is not Format.PROMPT and exc.rejects_format):
                raise
            spend.attempts += exc.attempts
            spend.latency_ms += exc.latency_ms
            if state.form is form:  # concurrent turns see the same rejection: move once
                state.form = Format.JSON_OBJECT if form is Format.JSON_SCHEMA else Format.PROMPT
                now = ("the prompt alone" if state.form is Format.PROMPT
                       else f"response_format {state.form.value}")
                note(f"rejected response_format {form.value} (HTTP {exc.status}); using "
                     f"{now} for the rest of the run")
            continue
        spend.add(reply)
        prose = (prose_before_json(reply.content)
                 if state.auto and form is not Format.PROMPT and not reply.tool_calls else None)
        if prose and state.form is form:
            state.form = Format.PROMPT
            note(f"ignored response_format {form.value} (the reply put prose before its JSON "
                 f"({excerpt(prose, 80)!r})); using the prompt alone for the rest of the run")
        return reply
