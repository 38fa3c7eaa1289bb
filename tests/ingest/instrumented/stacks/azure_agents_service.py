"""A scripted Azure AI Foundry Agents service (the `azure-ai-agents` client's REST API,
`api-version=v1`) on the stack server: agents, threads, messages, runs and run steps, at
`/<stack>/<scenario>/{assistants,threads}/...` (the client's endpoint is the stack's base
URL; it appends the paths `azure/ai/agents/operations/_operations.py` builds).

The model runs server-side, as in the real service: a run is `queued` when created; the
next `GET` of it runs one model step, which is the stack server's own scripted model
(`StackServer.answer`, a chat-completions request the service builds: the run's
instructions as the system message, the thread's history in OpenAI's chat form (user and
assistant messages, the calls earlier steps made and the outputs submitted for them), the
run's tools as the agent gave them, which are OpenAI's `{"type": "function", "function":
{...}}`). So every model step is a `Wire` record like any other stack's, and `expect.py`
derives the turns from them unchanged. A step that asks for tools leaves the run in
`requires_action` with `submit_tool_outputs` (the calls with the ids the model gave) and a
`tool_calls` run step; `submit_tool_outputs` queues the run again; a step that answers
adds the assistant message to the thread, a `message_creation` run step, and completes the
run with its usage summed over its steps. Lists are one page, newest first by default
(`order=desc`, the API's default), then an empty one after it (`_page`).
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

if TYPE_CHECKING:
    from tests.ingest.instrumented.stacks.wire import StackServer

COLLECTIONS = ("assistants", "threads")
"""The first path segments the service answers (after `/<stack>/<scenario>`)."""
CREATED_AT = 1_780_000_000


@dataclass
class _Thread:
    id: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The thread's messages as the API returns them, oldest first."""
    history: list[dict[str, Any]] = field(default_factory=list)
    """What the model is told of the thread: chat-completions messages, tool calls and
    outputs included."""


@dataclass
class _Run:
    body: dict[str, Any]
    """The run object as the API returns it."""
    steps: list[dict[str, Any]] = field(default_factory=list)


class AgentsService:
    """The service's state, one namespace per (stack, scenario)."""

    def __init__(self, server: StackServer) -> None:
        self._server = server
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._agents: dict[str, dict[str, Any]] = {}
        self._threads: dict[str, _Thread] = {}
        self._runs: dict[str, _Run] = {}

    def _id(self, kind: str) -> str:
        return f"{kind}_{next(self._ids):06d}"

    def handle(
        self, stack: str, scenario: str, method: str, route: list[str], query: str,
        body: dict[str, Any] | None,
    ) -> tuple[int, dict[str, Any]]:  # fmt: skip
        """The status and JSON body answering one request."""
        with self._lock:
            return self._route(stack, scenario, method, route, parse_qs(query), body or {})

    def _route(
        self, stack: str, scenario: str, method: str, route: list[str],
        query: dict[str, list[str]], body: dict[str, Any],
    ) -> tuple[int, dict[str, Any]]:  # fmt: skip
        match method, route:
            case "POST", ["assistants"]:
                return 200, self._create_agent(body)
            case "GET", ["assistants", agent_id]:
                return 200, self._agents[agent_id]
            case "DELETE", ["assistants", agent_id]:
                self._agents.pop(agent_id, None)
                return 200, {"id": agent_id, "object": "assistant.deleted", "deleted": True}
            case "POST", ["threads"]:
                return 200, self._create_thread(body)
            case "DELETE", ["threads", thread_id]:
                return 200, {"id": thread_id, "object": "thread.deleted", "deleted": True}
            case "POST", ["threads", thread_id, "messages"]:
                return 200, self._add_message(self._threads[thread_id], body)
            case "GET", ["threads", thread_id, "messages"]:
                return 200, _page(self._threads[thread_id].messages, query)
            case "POST", ["threads", thread_id, "runs"]:
                return 200, self._create_run(self._threads[thread_id], body)
            case "GET", ["threads", _, "runs", run_id]:
                return 200, self._advance(stack, scenario, self._runs[run_id])
            case "POST", ["threads", _, "runs", run_id, "submit_tool_outputs"]:
                return 200, self._submit(self._runs[run_id], body)
            case "POST", ["threads", _, "runs", run_id, "cancel"]:
                run = self._runs[run_id].body
                run.update(status="cancelled", cancelled_at=CREATED_AT, required_action=None)
                return 200, run
            case "GET", ["threads", _, "runs", run_id, "steps"]:
                return 200, _page(self._runs[run_id].steps, query)
        return 404, {"error": {"code": "NotFound", "message": f"no route {method} {route}"}}

    def _create_agent(self, body: dict[str, Any]) -> dict[str, Any]:
        agent = {
            "id": self._id("asst"), "object": "assistant", "created_at": CREATED_AT,
            "name": body.get("name"), "description": body.get("description"),
            "model": body.get("model"), "instructions": body.get("instructions"),
            "tools": body.get("tools") or [], "tool_resources": body.get("tool_resources") or {},
            "temperature": body.get("temperature", 1.0), "top_p": body.get("top_p", 1.0),
            "response_format": body.get("response_format", "auto"),
            "metadata": body.get("metadata") or {},
        }  # fmt: skip
        self._agents[agent["id"]] = agent
        return agent

    def _create_thread(self, body: dict[str, Any]) -> dict[str, Any]:
        thread = _Thread(self._id("thread"))
        self._threads[thread.id] = thread
        for message in body.get("messages") or ():
            self._add_message(thread, message)
        return {"id": thread.id, "object": "thread", "created_at": CREATED_AT,
                "tool_resources": {}, "metadata": body.get("metadata") or {}}  # fmt: skip

    def _add_message(
        self, thread: _Thread, body: dict[str, Any], agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        text = _content_text(body.get("content"))
        message = {
            "id": self._id("msg"), "object": "thread.message", "created_at": CREATED_AT,
            "thread_id": thread.id, "status": "completed", "incomplete_details": None,
            "completed_at": CREATED_AT, "incomplete_at": None, "role": body.get("role", "user"),
            "content": [{"type": "text", "text": {"value": text, "annotations": []}}],
            "assistant_id": agent_id, "run_id": run_id,
            "attachments": body.get("attachments") or [], "metadata": body.get("metadata") or {},
        }  # fmt: skip
        thread.messages.append(message)
        thread.history.append({"role": message["role"], "content": text})
        return message

    def _create_run(self, thread: _Thread, body: dict[str, Any]) -> dict[str, Any]:
        agent = self._agents[body["assistant_id"]]
        for message in body.get("additional_messages") or ():
            self._add_message(thread, message)
        instructions = body.get("instructions") or agent["instructions"]
        if body.get("additional_instructions"):
            instructions = f"{instructions} {body['additional_instructions']}"
        run = {
            "id": self._id("run"), "object": "thread.run", "thread_id": thread.id,
            "assistant_id": agent["id"], "status": "queued", "required_action": None,
            "last_error": None, "model": body.get("model") or agent["model"],
            "instructions": instructions, "tools": body.get("tools") or agent["tools"],
            "created_at": CREATED_AT, "expires_at": None, "started_at": None,
            "completed_at": None, "cancelled_at": None, "failed_at": None,
            "incomplete_details": None, "usage": None, "temperature": agent["temperature"],
            "top_p": agent["top_p"], "max_prompt_tokens": None, "max_completion_tokens": None,
            "truncation_strategy": {"type": "auto", "last_messages": None},
            "tool_choice": "auto", "response_format": "auto", "metadata": {},
            "tool_resources": {}, "parallel_tool_calls": True,
        }  # fmt: skip
        self._runs[run["id"]] = _Run(run)
        return run

    def _advance(self, stack: str, scenario: str, run: _Run) -> dict[str, Any]:
        """A queued run takes one model step; any other is returned as it is."""
        if run.body["status"] not in ("queued", "in_progress"):
            return run.body
        thread = self._threads[run.body["thread_id"]]
        system = [{"role": "system", "content": run.body["instructions"]}]
        request = {"model": run.body["model"], "messages": system + thread.history}
        if run.body["tools"]:
            request["tools"] = run.body["tools"]
        exchange = self._server.answer(stack, scenario, _copy(request))
        usage = {"prompt_tokens": exchange.usage["prompt_tokens"],
                 "completion_tokens": exchange.usage["completion_tokens"],
                 "total_tokens": exchange.usage["total_tokens"]}  # fmt: skip
        previous = run.body["usage"] or {"prompt_tokens": 0, "completion_tokens": 0,
                                         "total_tokens": 0}  # fmt: skip
        run.body["usage"] = {k: previous[k] + usage[k] for k in usage}
        run.body["started_at"] = CREATED_AT
        calls = exchange.message.get("tool_calls") or []
        if calls:
            thread.history.append(
                {"role": "assistant", "content": None, "tool_calls": _copy(calls)}
            )
            run.steps.insert(
                0,
                self._step(
                    run.body,
                    "tool_calls",
                    {"type": "tool_calls", "tool_calls": _copy(calls)},
                    "in_progress",
                    usage,
                ),
            )
            run.body.update(
                status="requires_action",
                required_action={
                    "type": "submit_tool_outputs",
                    "submit_tool_outputs": {"tool_calls": _copy(calls)},
                },
            )
            return run.body
        message = self._add_message(thread, {"role": "assistant",
                                             "content": exchange.message.get("content") or ""},
                                    run.body["assistant_id"], run.body["id"])  # fmt: skip
        # The history holds the text as the model said it (already appended by
        # `_add_message`).
        run.steps.insert(0, self._step(run.body, "message_creation", {
            "type": "message_creation", "message_creation": {"message_id": message["id"]}},
            "completed", usage))  # fmt: skip
        run.body.update(status="completed", completed_at=CREATED_AT, required_action=None)
        return run.body

    def _step(
        self, run: dict[str, Any], kind: str, details: dict[str, Any], status: str,
        usage: dict[str, int],
    ) -> dict[str, Any]:  # fmt: skip
        return {
            "id": self._id("step"), "object": "thread.run.step", "type": kind,
            "assistant_id": run["assistant_id"], "thread_id": run["thread_id"],
            "run_id": run["id"], "status": status, "step_details": details,
            "last_error": None, "created_at": CREATED_AT, "expired_at": None,
            "completed_at": CREATED_AT if status == "completed" else None,
            "cancelled_at": None, "failed_at": None, "usage": usage, "metadata": {},
        }  # fmt: skip

    def _submit(self, run: _Run, body: dict[str, Any]) -> dict[str, Any]:
        thread = self._threads[run.body["thread_id"]]
        outputs = body.get("tool_outputs") or []
        for output in outputs:
            thread.history.append({"role": "tool", "tool_call_id": output["tool_call_id"],
                                   "content": output.get("output") or ""})  # fmt: skip
        # The tool_calls step is done once its outputs are in; it tells them (the API's
        # `function.output`).
        given = {o["tool_call_id"]: o.get("output") for o in outputs}
        for step in run.steps:
            if step["type"] == "tool_calls" and step["status"] == "in_progress":
                step.update(status="completed", completed_at=CREATED_AT)
                for call in step["step_details"]["tool_calls"]:
                    call["function"] = {**call["function"], "output": given.get(call["id"])}
        run.body.update(status="queued", required_action=None)
        return run.body


def _content_text(content: Any) -> str:
    """A message's content as the client sends it: a string, or content blocks."""
    if isinstance(content, str):
        return content
    return "".join(b.get("text") or "" for b in content or () if isinstance(b, dict))


def _page(items: list[dict[str, Any]], query: dict[str, list[str]]) -> dict[str, Any]:
    """One page of a list, newest first unless `order=asc`, of the items after the cursor
    (`after`: the client asks for the next page after the last id it got until a page has
    none) and of one run only if asked (`run_id`)."""
    ordered = items if (query.get("order") or ["desc"])[0] == "asc" else items[::-1]
    if "run_id" in query:
        ordered = [i for i in ordered if i.get("run_id") == query["run_id"][0]]
    if "after" in query:
        ids = [i["id"] for i in ordered]
        after = query["after"][0]
        ordered = ordered[ids.index(after) + 1 :] if after in ids else []
    return {"object": "list", "data": ordered, "first_id": ordered[0]["id"] if ordered else None,
            "last_id": ordered[-1]["id"] if ordered else None, "has_more": False}  # fmt: skip


def _copy(value: Any) -> Any:
    """A deep copy: what was recorded or returned is never changed by a later step."""
    return json.loads(json.dumps(value))
