"""The turns a recording should give, derived from its wire records (`wire.json`): what the
scripted server received and answered, never what the export says.

Per turn: the user's request (the scenario's text, which the wire holds, maybe wrapped by
the framework), the system prompt and tool definitions of the turn's first request, every
tool call the model asked for with the result the next request told the model, the final
answer, the number of model calls and the summed token counts the client was sent (None
when a stream never sent them). A call of the `final_answer` tool (smolagents, BeeAI) is how
the agent answers, not a tool use: its argument (the tool's only required parameter,
`wire.final_answer_parameter`) is the final answer and it is not a call of the turn.
DSPy's text form (`wire.dspy_reply`) is read as its adapter writes it: a ReAct step's
`next_tool_name` and `next_tool_args` are a call (no id; `finish` ends the loop and is none),
the next requests' trajectory `observation_<i>` its result, the extraction's last output
field the final answer, and the tools the ones ReAct's instructions list (`(i) <name>, whose
description is <desc>...</desc>. It takes arguments {<properties>}.`, DSPy's `Tool.__str__`:
the properties of an object schema), `finish` aside.

A multi-agent turn (`scenarios.MULTI_AGENT`) is still ONE turn: the user's message and
everything the agents did for it, both agents' model calls in `llm_calls` and `usage`.
Its main line is the requests that carry the conversation, the triage agent's and, after
a handoff, the specialist's (the framework hands it the same conversation: DESIGN §3, a
model call whose newest genuine user message is the turn's; `ingest/grouping.py` rule 2,
an agent handed the same user message runs the same turn), even when the framework hands
it the history as summary text and no user message (the Agents SDK's
`nest_handoff_history`). A request whose newest user message is the task the triage agent
wrote in its delegation call is a sub-agent's (an agent used as a tool: the server writes
that task as `wire.TASK_PREFIX` and the request): its model calls count, but its own tool
calls are the delegation call's execution, not calls of the turn, as a tool's internals
are not (grouping rule 2; `ingest/assemble.py`: sub-agent calls count for `llm_calls` and
usage only). So:
- `request`, `system_prompt`: the user's message and the prompt of the agent that got it
  (the turn's first request: the triage agent's);
- `tools`: every tool the main line was offered (the union of its requests' definitions,
  first definition of a name kept): the triage agent's transfer or delegation tool and,
  after a handoff, the specialist's own; "tools available in this turn", not one agent's;
- `calls`: the main line's, in order: the transfer call when the framework makes a handoff
  a tool call on the wire (its result what the next request told the model, and not an
  error), then the specialist's `get_weather`; for an agent as a tool, the delegation call
  alone, its result the specialist's text;
- `final_answer`: the last main-line request's text: the specialist's answer after a
  handoff, the triage agent's after a delegation; when the run ends in the delegation
  (Strands' `as_tool(delegate=True)`: the specialist's answer is returned as the run's,
  no model call after it), the sub-agent's last text, which is then the delegation call's
  result too (what the tool returned, though no request may ever tell a model).
A tool no scenario defines (a transfer or delegation tool) never failed: the framework
ran it; when no request tells its result by id (a handoff's specialist may get the history
as text), its result is the one the same tool gave the same arguments elsewhere on the
wire.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from typing import Any

from tests.ingest.instrumented.scenarios import ALL_SCENARIOS, TOOL_FUNCTIONS, run_tool
from tests.ingest.instrumented.stacks.wire import (
    DSPY_FINISH,
    FINAL_ANSWER_TOOL,
    TASK_PREFIX,
    dspy_fields,
    dspy_outputs,
    dspy_values,
    final_answer_parameter,
    gemini_messages,
    responses_messages,
    scenario_tool,
)

FIELDS = (
    "request", "system_prompt", "tools", "call.id", "call.name", "call.arguments",
    "call.result", "call.is_error", "final_answer", "llm_calls", "usage",
)  # fmt: skip


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    texts = ("text", "input_text", "output_text", None)
    return "".join(p.get("text") or "" for p in content if p.get("type") in texts)


def _system(wire: dict[str, Any]) -> str | None:
    request = wire["request"]
    if wire["api"] == "anthropic":
        # Several system blocks (Claude Code sends its own before the app's) are read one a
        # line, as the model reads separate blocks.
        system = request.get("system")
        if isinstance(system, list) and len(system) > 1:
            return "\n".join(_text([block]) or "" for block in system)
        return _text(system)
    if wire["api"] == "gemini":
        return _text((request.get("systemInstruction") or {}).get("parts"))
    if wire["api"] == "bedrock":
        return _text(request.get("system")) or None
    roles = ("system", "developer")
    if wire["api"] == "responses":
        # The instructions, then any system or developer message of the input.
        said = [m for m in responses_messages(request) if m["role"] in roles]
        texts = [_text(request.get("instructions")), *(_text(m["content"]) for m in said)]
        return "\n".join(t for t in texts if t) or None
    texts = [_text(m["content"]) for m in request["messages"] if m["role"] in roles]
    return "\n".join(t for t in texts if t) or None


def _gemini_schema(declaration: dict[str, Any]) -> Any:
    for key in ("parametersJsonSchema", "parameters_json_schema", "parameters"):
        if key in declaration:
            return declaration[key]
    return None


_DSPY_TOOL = re.compile(r"^\s*\(\d+\) (\S+?)(?:, whose description is <desc>(.*)</desc>)?\. "
                        r"It takes arguments (\{.*\})\.\s*$", re.MULTILINE)


def _dspy_tools(wire: dict[str, Any]) -> list[list[Any]]:
    tools = []
    for name, description, args in _DSPY_TOOL.findall(_system(wire) or ""):
        if name != DSPY_FINISH:
            schema = {"type": "object", "properties": ast.literal_eval(args)}
            tools.append([name, description or None, schema])
    return tools


def _tools(wire: dict[str, Any]) -> list[list[Any]]:
    tools = []
    if wire["api"] == "openai" and dspy_outputs(wire["request"]) is not None:
        tools += _dspy_tools(wire)
    if wire["api"] == "bedrock":
        specs = [t["toolSpec"] for t in (wire["request"].get("toolConfig") or {}).get("tools") or ()
                 if "toolSpec" in t]  # fmt: skip
        tools += [[s["name"], s.get("description"), (s.get("inputSchema") or {}).get("json")]
                  for s in specs]  # fmt: skip
    for t in wire["request"].get("tools") or ():
        if wire["api"] == "gemini":
            # google-genai sends its own field names (parameters_json_schema), not the API's.
            declarations = t.get("functionDeclarations") or t.get("function_declarations") or ()
            tools += [[f["name"], f.get("description"), _gemini_schema(f)] for f in declarations]
        elif wire["api"] == "anthropic":
            tools.append([t["name"], t.get("description"), t.get("input_schema")])
        elif wire["api"] == "responses":
            if t.get("type") == "function":
                tools.append([t["name"], t.get("description"), t.get("parameters")])
        else:
            fn = t["function"]
            tools.append([fn["name"], fn.get("description"), fn.get("parameters")])
    return sorted(tools, key=lambda t: t[0])


def _asked(wire: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(id, name, arguments) of the calls a response asked for."""
    if wire["api"] == "gemini":
        return [(p["functionCall"].get("id"), p["functionCall"]["name"], p["functionCall"]["args"])
                for p in _gemini_parts(wire) if "functionCall" in p]  # fmt: skip
    if wire["api"] == "bedrock":
        return [(b["toolUse"]["toolUseId"], b["toolUse"]["name"], b["toolUse"]["input"])
                for b in _bedrock_blocks(wire) if "toolUse" in b]  # fmt: skip
    if wire["api"] == "anthropic":
        return [(b["id"], b["name"], b["input"])
                for b in wire["response"]["content"] if b["type"] == "tool_use"]  # fmt: skip
    if wire["api"] == "responses":
        return [(i["call_id"], i["name"], json.loads(i["arguments"]))
                for i in wire["response"]["output"] if i["type"] == "function_call"]  # fmt: skip
    if wire["api"] == "cohere":
        return [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                for c in wire["response"]["message"].get("tool_calls") or ()]  # fmt: skip
    if wire["api"] == "ollama":
        return [(None, c["function"]["name"], c["function"]["arguments"])
                for c in wire["response"]["message"].get("tool_calls") or ()]  # fmt: skip
    message = wire["response"]["choices"][0]["message"]
    if dspy_outputs(wire["request"]) is not None:
        said = dspy_values(wire["request"], message["content"])
        name = said.get("next_tool_name")
        return [(None, name, said["next_tool_args"])] if name and name != DSPY_FINISH else []
    return [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in message.get("tool_calls") or ()]  # fmt: skip


def _gemini_parts(wire: dict[str, Any]) -> list[dict[str, Any]]:
    return list(wire["response"]["candidates"][0]["content"]["parts"])


def _bedrock_blocks(wire: dict[str, Any]) -> list[dict[str, Any]]:
    return list(wire["response"]["output"]["message"]["content"])


def _said(wire: dict[str, Any]) -> str | None:
    if wire["api"] == "bedrock":
        texts = [b["text"] for b in _bedrock_blocks(wire) if "text" in b]
        return "".join(texts) if texts else None
    if wire["api"] == "gemini":
        texts = [p["text"] for p in _gemini_parts(wire) if "text" in p]
        return "".join(texts) if texts else None
    if wire["api"] == "anthropic":
        texts = [b["text"] for b in wire["response"]["content"] if b["type"] == "text"]
        return "".join(texts) if texts else None
    if wire["api"] == "responses":
        said = [i for i in wire["response"]["output"] if i["type"] == "message"]
        return "".join(_text(i["content"]) or "" for i in said) if said else None
    if wire["api"] == "ollama":
        return wire["response"]["message"]["content"] or None
    if wire["api"] == "cohere":
        content = wire["response"]["message"].get("content")
        return _text(content) if content else None
    return wire["response"]["choices"][0]["message"]["content"]


def _results(wire: dict[str, Any]) -> dict[str, str]:
    """Tool results a request tells the model, by call id. Frameworks that send them as
    user text (smolagents: `Call id: <id>\\nObservation:\\n<result>`) are read from that."""
    found: dict[str, str] = {}
    if wire["api"] == "gemini":
        for content in wire["request"].get("contents") or ():
            for part in content.get("parts") or ():
                if "functionResponse" in part:
                    answer = part["functionResponse"]
                    found[answer.get("id")] = json.dumps(answer.get("response"))
        return found
    if wire["api"] == "responses":
        items = wire["request"].get("input")
        for item in items if isinstance(items, list) else ():
            if item.get("type") == "function_call_output":
                output = item.get("output")
                found[item["call_id"]] = output if isinstance(output, str) else _text(output) or ""
        return found
    if wire["api"] == "ollama":
        return _ollama_results(wire["request"]["messages"])
    for m in wire["request"]["messages"]:
        content = m.get("content")
        if wire["api"] == "bedrock":
            for block in content or ():
                if "toolResult" in block:
                    answer = block["toolResult"]
                    found[answer["toolUseId"]] = _bedrock_result(answer.get("content") or ())
        elif m["role"] == "tool":
            found[m["tool_call_id"]] = _text(content) or ""
        elif isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_result":
                    found[block["tool_use_id"]] = _tool_text(block["content"])
    return found


_REMINDER = re.compile(r"<system-reminder>.*</system-reminder>", re.DOTALL)


def _tool_text(content: str | list[dict[str, Any]]) -> str:
    """A Messages API tool result's text, less what Claude Code adds to it for the model: a
    text block that is wholly a `<system-reminder>` (the tokens left), after a newline it
    ends the result's last block with (a failed call's result is one string: the blocks
    joined by newlines); the tool returned neither."""
    if isinstance(content, str):
        kept = content
        if (found := _REMINDER.search(content)) and found.end() == len(content):
            kept = content[: found.start()].removesuffix("\n").removesuffix("\n")
        return kept
    notes = [b for b in content if b.get("type") == "text" and _REMINDER.fullmatch(b["text"])]
    text = _text([b for b in content if b not in notes]) or ""
    return text.removesuffix("\n") if notes else text


def _ollama_results(messages: list[dict[str, Any]]) -> dict[str, str]:
    """Ollama's calls have no ids: the `tool` messages after an assistant message answer its
    calls in order, and a call is known by its name and arguments (`_call_key`)."""
    found: dict[str, str] = {}
    asked: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "assistant":
            asked = [c["function"] for c in m.get("tool_calls") or ()]
        elif m["role"] == "tool" and asked:
            call = asked.pop(0)
            found[_call_key(None, call["name"], call["arguments"])] = _text(m.get("content")) or ""
    return found


def _call_key(cid: str | None, name: str, arguments: Any) -> str:
    """A call's key among a turn's results: its id, or where the API gives none (Ollama's)
    its name and arguments (the scenarios' tools are functions of them)."""
    return cid if cid is not None else f"{name}:{json.dumps(arguments, sort_keys=True)}"


def _bedrock_result(content: Any) -> str:
    """A toolResult's content blocks: `text` as it is, `json` as its JSON text."""
    return "".join(b["text"] if "text" in b else json.dumps(b.get("json")) for b in content)


_CALLING, _OBSERVATION, _ERROR = "Calling tools:\n", "Observation:\n", "Error:\n"
_NAMED_CALL = re.compile(r"\ACall id: [^\n]*\n")


def _text_results(wire: dict[str, Any]) -> dict[str, str]:
    """smolagents's form: an assistant `Calling tools:\\n<repr of the calls>` message, then a
    user `Observation:\\n<results>` message, one line per call when there are as many lines
    as calls (parallel calls), else the whole text for each."""
    found: dict[str, str] = {}
    messages = wire["request"].get("messages") or ()
    for said, reply in itertools.pairwise(messages):
        # A streamed step puts the model's empty text before it (smolagents merges them).
        text = (_text(said.get("content")) or "").lstrip()
        # smolagents 1.x names the step's first call before the label (`Call id: <id>`).
        answer = _NAMED_CALL.sub("", _text(reply.get("content")) or "", count=1)
        if said["role"] != "assistant" or not text.startswith(_CALLING):
            continue
        ids = [c["id"] for c in ast.literal_eval(text[len(_CALLING) :])]
        if reply["role"] != "user" or not answer.startswith(_OBSERVATION):
            continue
        observed = answer[len(_OBSERVATION) :].split("\nNew task:\n")[0]
        lines = observed.split("\n")
        for k, cid in enumerate(ids):
            found[cid] = lines[k] if len(lines) == len(ids) else observed
    return found


def _dspy_results(wire: dict[str, Any]) -> dict[str, str]:
    """A DSPy ReAct request's trajectory: each step's `tool_name_<i>`, `tool_args_<i>` and
    `observation_<i>` (the text up to the adapter's closing reminder), by name and arguments."""
    if dspy_outputs(wire["request"]) is None:
        return {}
    said = [m for m in wire["request"]["messages"] if m["role"] == "user"]
    text = (_text(said[-1]["content"]) or "").rsplit("\n\nRespond with ", 1)[0]
    fields = dspy_fields(text)
    found: dict[str, str] = {}
    for key, name in fields.items():
        if key.startswith("tool_name_") and name != DSPY_FINISH:
            k = key.removeprefix("tool_name_")
            arguments = json.loads(fields[f"tool_args_{k}"])
            found[_call_key(None, name, arguments)] = fields.get(f"observation_{k}", "")
    return found


def _dspy_answer(wire: dict[str, Any]) -> str | None:
    """A DSPy extraction's answer: its last output field (after ChainOfThought's
    `reasoning`)."""
    outputs = dspy_outputs(wire["request"])
    if outputs is None or not outputs[1] or wire["api"] != "openai":
        return None
    said = dspy_values(wire["request"], wire["response"]["choices"][0]["message"]["content"])
    return None if "next_tool_name" in said else str(said.get(outputs[1][-1]))


def _error_text(wire: dict[str, Any]) -> str | None:
    """smolagents drops a failed call from the history and tells the model in user text:
    `Error:\\n<what failed>\\nPlease try again...`; the first line is what failed."""
    for m in wire["request"].get("messages") or ():
        text = _text(m.get("content")) or ""
        if m["role"] == "user" and _ERROR in text:
            return text.split(_ERROR, 1)[1].split("\n")[0]
    return None


def _usage(wire: dict[str, Any]) -> tuple[int, int]:
    usage = wire["response"].get("usage")
    if wire["api"] == "gemini":
        usage = wire["response"]["usageMetadata"]
        return usage["promptTokenCount"], usage["candidatesTokenCount"]
    if wire["api"] == "anthropic":
        return usage["input_tokens"], usage["output_tokens"]
    if wire["api"] == "bedrock":
        return usage["inputTokens"], usage["outputTokens"]
    if wire["api"] == "responses":
        return usage["input_tokens"], usage["output_tokens"]
    if wire["api"] == "ollama":
        return wire["response"]["prompt_eval_count"], wire["response"]["eval_count"]
    if wire["api"] == "cohere":
        return usage["tokens"]["input_tokens"], usage["tokens"]["output_tokens"]
    return usage["prompt_tokens"], usage["completion_tokens"]


def _main_line(mine: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turn's requests less a sub-agent's: one whose newest user message is a task the
    server wrote in a delegation call (`wire.TASK_PREFIX`), not the user's message."""
    return [w for w in mine if TASK_PREFIX not in _newest_user_text(w)]


def _newest_user_text(wire: dict[str, Any]) -> str:
    if wire["api"] == "gemini":
        messages = gemini_messages(wire["request"])
    elif wire["api"] == "responses":
        messages = responses_messages(wire["request"])
    else:
        messages = wire["request"].get("messages") or []
    said = [m for m in messages if m.get("role") == "user"]
    if not said:
        return ""
    content = said[-1].get("content")
    if wire["api"] == "bedrock":
        return "".join(b.get("text") or "" for b in content or ())
    return _text(content) or ""


def _same_call_result(wire: list[dict[str, Any]], name: str, arguments: Any) -> str | None:
    """The result a request told for another call of the same framework tool with the same
    arguments: a transfer tool is a function of them (ADK's `transfer_to_agent` returns
    `{"result": null}`, the Agents SDK's handoff `{"assistant": <agent>}`), and the last
    turn's transfer is never told back by id (the specialist gets the history as text)."""
    results: dict[str, str] = {}
    for w in wire:
        results.update(_results(w))
    same = [cid for w in wire for cid, n, args in _asked(w) if n == name and args == arguments]
    return next((results[cid] for cid in same if cid in results), None)


def _union(requests: list[dict[str, Any]]) -> list[list[Any]]:
    tools: dict[str, list[Any]] = {}
    for w in requests:
        for tool in _tools(w):
            tools.setdefault(tool[0], tool)
    return sorted(tools.values(), key=lambda t: t[0])


def expected_turns(scenario: str, wire: list[dict[str, Any]]) -> list[dict[str, Any]]:
    turns = []
    for index, scripted in enumerate(ALL_SCENARIOS[scenario].turns):
        mine = [w for w in wire if w["turn"] == index]
        line = _main_line(mine)
        later = [w for w in wire if w["turn"] >= index]
        results: dict[str, str] = {}
        for w in later:
            results.update(_results(w))
            results.update(_text_results(w))
            results.update(_dspy_results(w))
        asked = [a for w in line for a in _asked(w)]
        calls = [
            {"id": cid, "name": name, "arguments": args,
             "result": results.get(_call_key(cid, name, args)),
             "is_error": (tool := scenario_tool(name)) in TOOL_FUNCTIONS
                         and run_tool(tool, json.dumps(args))[1]}
            for cid, name, args in asked if name != FINAL_ANSWER_TOOL
        ]  # fmt: skip
        for call in calls:
            if call["result"] is None and scenario_tool(call["name"]) not in TOOL_FUNCTIONS:
                call["result"] = _same_call_result(wire, call["name"], call["arguments"])
        failed = next((e for w in later if (e := _error_text(w))), None)
        for call in calls:
            if call["result"] is None and call["is_error"]:
                call["result"] = failed
        answered_in = final_answer_parameter(line[-1]["request"])
        answers = [args.get(answered_in) for _, name, args in _asked(line[-1])
                   if name == FINAL_ANSWER_TOOL]  # fmt: skip
        if line[-1] is not mine[-1]:
            # The run ended in its delegation: the sub-agent's answer is the delegation's
            # result (no later request may tell it) and the turn's answer.
            answers = [_said(mine[-1])]
            ended = {cid for cid, _, _ in _asked(line[-1])}
            for call in calls:
                if call["id"] in ended and call["result"] is None:
                    call["result"] = answers[0]
        sent = all(w["usage_sent"] for w in mine)
        usage = [sum(_usage(w)[k] for w in mine) for k in (0, 1)] if sent else None
        turns.append({
            "request": scripted.request,
            "system_prompt": _system(mine[0]),
            "tools": _union(line),
            "calls": calls,
            "final_answer": answers[0] if answers else _dspy_answer(line[-1]) or _said(line[-1]),
            "llm_calls": len(mine),
            "usage": usage,
        })  # fmt: skip
    return turns
