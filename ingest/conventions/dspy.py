"""DSPy's prompts and programs, under OpenInference's DSPy instrumentation or MLflow's
DSPy autolog, or seen only by a client instrumentation of its model calls: a model call's
messages read as the conversation they encode.

DSPy's adapters do not send the conversation as messages: `ChatAdapter` renders a
signature's input fields into one user message as `[[ ## field ## ]]` sections, followed by
an instruction ("Respond with the corresponding output fields ..."), and parses the
completion's sections back into output fields (stanfordnlp/dspy `dspy/adapters/
chat_adapter.py`). `ReAct` puts its trajectory (`thought_i`, `tool_name_i`, `tool_args_i`,
`observation_i`) into the same user message, calls the tool the completion names in
`next_tool_name` / `next_tool_args`, stops at the pseudo-tool `finish`, and extracts the
answer with one more call (`dspy/predict/react.py`). Read as messages, every step's user
message differs, so each step looked like a new turn whose request was the template.

Decoded here, on the model calls whose request holds DSPy sections (OpenInference LLM
spans: `input.value` `{"messages": [...]}` and `output.value` a list of completions;
MLflow `CHAT_MODEL` spans: the same in `mlflow.spanInputs` / `spanOutputs`; OTel GenAI
model calls: `gen_ai.input.messages` / `gen_ai.output.messages`, on the span or its
operation-details event, as a LiteLLM instrumentation records DSPy's calls with nothing of
DSPy's own above them, OpenLIT's, which has no DSPy instrumentation, each call a trace of its
own):
- the user message as the request, from its input fields other than the trajectory (one
  field: its value; several: `name: value` paragraphs), then each trajectory step as the
  assistant's tool call and the tool's result; a step's call id is synthesized as
  `{tool}_{step}` (DSPy has none), the same in the step's completion and in later history;
- a completion naming a tool as that call; any other completion's output fields,
  `reasoning` aside, as the answer (a JSON object, JSONAdapter's, alike);
- OpenInference's DSPy tool spans (`{tool}.__call__`): the tool's own name, its
  `{"kwargs": ...}` input unwrapped; MLflow's (`Tool.{tool}`, mlflow `dspy/callback.py`
  `on_tool_start`, the tool's name in its `name` attribute, the arguments its inputs): the
  tool's own name too, not the span's, so the call the model named is the span's;
- the tools a ReAct step's request offers, from the instructions ReAct writes into its
  signature (`ReAct.__init__`: one line per tool, `(i) ` and the tool's `str`, which is
  `{name}, whose description is <desc>{desc}</desc>. It takes arguments {args}.` or without
  a description `{name}. It takes arguments {args}.`, the description's newlines made
  spaces; `dspy/adapters/types/tool.py` `Tool.__str__`); `args` is the Python repr of the
  properties of the function's JSON schema (`Tool._parse_function`), so the parameters are
  that object schema;
- an observation ReAct wrote for a tool that raised (`Execution error in {tool}: ...`) as a
  failed result, which is all that tells the failure where no span ran the tool;
`finish` is no tool of the agent: ReAct adds it to every tool list itself (a lambda
returning "Completed.") so the model can say it is done, and stops the loop on it before
the extracting call gives the answer (`ReAct.__init__` / `forward`). A completion naming it
keeps only its thought, the trajectory drops its steps, and its tool span is structure
(`calls` rule 5), so it is neither one of the turn's calls nor one of its tools.
Model, usage and the rest stay OpenInference's and MLflow's.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    execution,
    instructions_text,
    parse_messages,
    system_text,
    text_message,
    tool_call,
    tool_result,
    unwrap_tool_input,
)
from turnscore.ingest.conventions.otel_genai import content_attributes
from turnscore.ingest.conventions.values import (
    JsonValue,
    as_str,
    canonical_json,
    json_or_text,
    result_text,
    try_json,
)
from turnscore.ingest.model import Message, Part, PartType, SpanKind, ToolDef

_SECTION = "[[ ## "
_HEADER = re.compile(r"\[\[ ## (\w+) ## \]\]")
_INSTRUCTION = re.compile(r"\n\s*Respond with (?:the corresponding output fields|a JSON object)")
_STEP = re.compile(r"(thought|tool_name|tool_args|observation)_(\d+)")
_TOOL_SUFFIX = ".__call__"
_MLFLOW_TOOL_PREFIX = "Tool."
_MODEL_SPAN_TYPES = frozenset({"CHAT_MODEL", "LLM"})
_FAILED = "Execution error in {tool}: "
"""How ReAct words a tool's failure as its observation (`ReAct.forward`: the exception as
the model is told it), the failure's only record where no span ran the tool."""
_FINISH = "finish"
"""ReAct's own end-of-loop pseudo-tool (stanfordnlp/dspy `dspy/predict/react.py`)."""
_TOOL_LINE = re.compile(
    r"^\s*\(\d+\) (\S+?)(?:, whose description is <desc>(.*)</desc>)?\. "
    r"It takes arguments (\{.*\})\.\s*$", re.MULTILINE)


def _accepts(view: SpanView) -> bool:
    kind = as_str(view.get(A.OI_SPAN_KIND))
    if kind == "TOOL":  # DSPy's tool spans name no tool; other TOOL spans are not read here
        return view.name.endswith(_TOOL_SUFFIX) and view.get(A.OI_TOOL_NAME) is None
    if kind == "LLM" and _SECTION in (as_str(view.get(A.OI_INPUT_VALUE)) or ""):
        return True
    span_type = as_str(json_or_text(view.get(A.MLFLOW_SPAN_TYPE)))
    if span_type == "TOOL":
        return view.name == f"{_MLFLOW_TOOL_PREFIX}{_mlflow_tool(view)}"
    if span_type in _MODEL_SPAN_TYPES:
        return _SECTION in (as_str(view.get(A.MLFLOW_SPAN_INPUTS)) or "")
    return _holds_sections(content_attributes(view).get(A.GEN_AI_INPUT_MESSAGES))


def _holds_sections(value: JsonValue) -> bool:
    """A text, or any text within structured messages (a log record's AnyValue), with a
    DSPy section."""
    if isinstance(value, str):
        return _SECTION in value
    if isinstance(value, list):
        return any(_holds_sections(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_sections(v) for v in value.values())
    return False


def _mlflow_tool(view: SpanView) -> str | None:
    return as_str(json_or_text(view.get(A.MLFLOW_DSPY_TOOL_NAME)))


def decode(view: SpanView, problems: Problems) -> Decoded:
    if as_str(view.get(A.OI_SPAN_KIND)) == "TOOL":
        return _tool(view)
    if (name := _mlflow_tool(view)) and view.name == f"{_MLFLOW_TOOL_PREFIX}{name}":
        inputs = json_or_text(view.get(A.MLFLOW_SPAN_INPUTS))
        output = json_or_text(view.get(A.MLFLOW_SPAN_OUTPUTS))
        return Decoded(kind=SpanKind.TOOL, tool_execution=execution(
            name, None, inputs, None if output is None else result_text(output)))
    if _SECTION in (as_str(view.get(A.OI_INPUT_VALUE)) or ""):
        request = _loaded(view.get(A.OI_INPUT_VALUE))
        completions = _loaded(view.get(A.OI_OUTPUT_VALUE))
    elif view.get(A.MLFLOW_SPAN_INPUTS) is not None:
        request = _loaded(view.get(A.MLFLOW_SPAN_INPUTS))
        completions = _loaded(view.get(A.MLFLOW_SPAN_OUTPUTS))
    else:
        request, completions = _genai_request(view, problems)
    inputs, steps = _request(request)
    if inputs is None:
        return Decoded()
    system = system_text(inputs)
    return Decoded(
        kind=SpanKind.LLM,
        input_messages=inputs,
        output_messages=_completion(completions, steps),
        system_instructions=system,
        tool_definitions=_offered(system or ""),
    )


def _genai_request(view: SpanView, problems: Problems) -> tuple[JsonValue, JsonValue]:
    """GenAI messages as the request and completions OpenInference records: role and text
    (the system instructions first when the messages leave them out), the answers' texts."""
    content = content_attributes(view)

    def said(key: str) -> list[tuple[str, str]]:
        raw = json_or_text(content.get(key))
        messages = parse_messages(raw, key, problems) if raw is not None else ()
        return [(m.role, "".join(p.text or "" for p in m.parts if p.type is PartType.TEXT))
                for m in messages]  # fmt: skip

    request = [{"role": role, "content": text} for role, text in said(A.GEN_AI_INPUT_MESSAGES)]
    instructions = instructions_text(json_or_text(content.get(A.GEN_AI_SYSTEM_INSTRUCTIONS)))
    if instructions and not any(m["role"] == "system" for m in request):
        request.insert(0, {"role": "system", "content": instructions})
    return request, [text for role, text in said(A.GEN_AI_OUTPUT_MESSAGES) if role == "assistant"]


def _offered(system: str) -> tuple[ToolDef, ...] | None:
    """ReAct's tool list in a request's instructions, `finish` aside; None without one."""
    tools = []
    for found in _TOOL_LINE.finditer(system):
        name, description, args = found.groups()
        try:
            properties = ast.literal_eval(args)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            properties = None
        schema = {"type": "object", "properties": properties} if isinstance(properties, dict) \
            else None
        if name != _FINISH:
            tools.append(ToolDef(name, description,
                                 None if schema is None else canonical_json(schema)))
    return tuple(tools) if tools else None


def _loaded(value: Any) -> JsonValue:
    """JSON text, once or (MLflow encodes every value) twice."""
    value = json_or_text(value)
    return json_or_text(value) if isinstance(value, str) else value


def _tool(view: SpanView) -> Decoded:
    name = view.name.removesuffix(_TOOL_SUFFIX)
    if name == _FINISH:  # ReAct ending its loop: structure, whatever else reads the span
        return Decoded(kind=SpanKind.CHAIN)
    arguments, _ = unwrap_tool_input(view.get(A.OI_INPUT_VALUE))
    output = json_or_text(view.get(A.OI_OUTPUT_VALUE))
    return Decoded(kind=SpanKind.TOOL, tool_execution=execution(
        name, None, json_or_text(arguments), None if output is None else result_text(output)))


def _sections(text: str) -> list[tuple[str, str]]:
    """The `[[ ## name ## ]]` sections of a DSPy message, in order, values stripped."""
    headers = list(_HEADER.finditer(text))
    if not headers:  # JSONAdapter's completion: one JSON object, no sections
        return []
    return [
        (h.group(1), text[h.end():nxt.start() if nxt else len(text)].strip())
        for h, nxt in zip(headers, [*headers[1:], None], strict=True)
    ]


def _request(value: JsonValue) -> tuple[tuple[Message, ...] | None, int]:
    """A DSPy request as messages, and how many trajectory steps it holds."""
    messages = value.get("messages") if isinstance(value, dict) else value
    if not isinstance(messages, list):
        return None, 0
    out: list[Message] = []
    steps = 0
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            continue
        role, content = str(message.get("role")), message["content"]
        if role == "user" and _SECTION in content:
            user, steps = _user(content)
            out.extend(user)
        elif role == "assistant" and _SECTION in content:
            out.append(_answer(_sections(content)))  # a demo's or an earlier turn's
        else:
            out.append(Message(role, (Part(PartType.TEXT, text=content),)))
    return tuple(out), steps


def _user(content: str) -> tuple[list[Message], int]:
    """A user message's input fields as the request, its trajectory as calls and results."""
    # The adapter's closing instruction names the output sections: cut before reading any.
    instruction = list(_INSTRUCTION.finditer(content))
    sections = _sections(content[:instruction[-1].start()] if instruction else content)
    fields: list[tuple[str, str]] = []
    steps: dict[int, dict[str, str]] = {}
    for name, value in sections:
        if found := _STEP.fullmatch(name):
            steps.setdefault(int(found.group(2)), {})[found.group(1)] = value
        elif name != "trajectory":
            fields.append((name, value))
    messages = [text_message("user", _joined(fields))]
    for index in sorted(steps):
        step = steps[index]
        tool = step.get("tool_name", "")
        if not tool or tool == _FINISH:
            continue
        call_id = f"{tool}_{index}"
        messages.append(Message("assistant", (tool_call(call_id, tool, _arguments(step)),)))
        observation = step.get("observation", "")
        failed = observation.startswith(_FAILED.format(tool=tool))
        messages.append(Message("tool", (tool_result(call_id, observation, is_error=failed),)))
    return messages, (max(steps) + 1 if steps else 0)


def _arguments(fields: dict[str, str], key: str = "tool_args") -> JsonValue:
    text = fields.get(key, "")
    ok, parsed = try_json(text)
    return parsed if ok else text


def _completion(value: JsonValue, steps: int) -> tuple[Message, ...] | None:
    """The first completion: a ReAct step's call, or the output fields as the answer."""
    first = value[0] if isinstance(value, list) and value else value
    if isinstance(first, dict) and isinstance(first.get("text"), str):
        first = first["text"]
    if isinstance(first, str):
        fields = _sections(first)
        if not fields:
            ok, parsed = try_json(first)
            if not (ok and isinstance(parsed, dict)):
                return (text_message("assistant", first),)
            fields = [(str(k), v if isinstance(v, str) else result_text(v))
                      for k, v in parsed.items()]
    else:
        return None
    named = dict(fields)
    tool = named.get("next_tool_name")
    if tool is None:
        return (_answer(fields),)
    thought = Part(PartType.OTHER, text=named.get("next_thought", ""))
    if tool == _FINISH:
        return (Message("assistant", (thought,)),)
    call = tool_call(f"{tool}_{steps}", tool, _arguments(named, "next_tool_args"))
    return (Message("assistant", (thought, call)),)


def _answer(fields: list[tuple[str, str]]) -> Message:
    shown = [(n, v) for n, v in fields if n not in ("reasoning", "completed")]
    return text_message("assistant", _joined(shown))


def _joined(fields: list[tuple[str, str]]) -> str:
    if len(fields) == 1:
        return fields[0][1]
    return "\n\n".join(f"{name}: {value}" for name, value in fields)


DSPY = Convention(
    "dspy", decode,
    markers=frozenset({A.OI_SPAN_KIND, A.MLFLOW_SPAN_TYPE, A.GEN_AI_INPUT_MESSAGES}),
    events=frozenset({A.EV_OPERATION_DETAILS}), accepts=_accepts,
)  # fmt: skip
