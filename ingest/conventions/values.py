"""Value helpers shared by every convention decoder: JSON-in-strings, canonical JSON, indices.

Telemetry carries one datum in several physical forms (CONVENTIONS.md pitfall 1): a JSON
string, a structured AnyValue, or flattened indexed keys. These helpers bring each form to
plain Python values so the decoders read one shape.

Unflattening (`unflatten`): keys under a prefix are split on '.'; a numeric segment is a
list index only when more segments follow it (`a.0.b` indexes, a trailing `a.0` is a key
named '0'). Mappings whose keys are all indices become lists ordered by index, with gaps
closed (a missing index is not invented).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from turnscore.ingest.model import bytes_as_base64
from turnscore.ingest.records import AttrValue

JsonValue = Any
"""A parsed JSON value; JSON by nature (see STYLE.md 'typed at the edge')."""


PLACEHOLDERS: frozenset[str] = frozenset({
    "<elided>",  # Google ADK, per message part, when content capture is off for it
    "[REDACTED]", "<REDACTED>", "REDACTED", "[redacted]", "<redacted>",
    "[CONTENT REDACTED]", "<content redacted>", "[omitted]", "<omitted>",
    "[FILTERED]", "<filtered>", "[hidden]", "***",
})
"""Texts that stand for content that was not captured (capture off, redaction by the SDK
or by a collector processor), never content. Compared after stripping whitespace, case
sensitive except as listed. A part holding one is dropped (a message left without parts
says nothing; a request, answer or result made only of them is "not captured"). An empty
string is not a placeholder: it is empty text, which no rule takes for a request."""


SYNTHETIC_TOOL_NAMES: frozenset[str] = frozenset({"(merged tools)"})
"""Tool names that mark a span grouping other tool spans, not a tool (ADK's
`execute_tool (merged)` around parallel calls): structure (`turnscore.ingest.calls`)."""


_SCRUBBED = re.compile(r"\[Scrubbed due to '[^'\]]{1,40}'\]")
"""Logfire's scrubbing (on by default) puts this in place of a whole value whose key or
text matched a sensitive pattern (pydantic/logfire `logfire/_internal/scrubbing.py`:
`f'[Scrubbed due to {matched_substring!r}]'`), e.g. a tool's arguments that mention an
API key: content not captured, like `PLACEHOLDERS`."""
_LONGEST_PLACEHOLDER = max(*map(len, PLACEHOLDERS), len("[Scrubbed due to '']") + 40)


def is_placeholder(text: object) -> bool:
    """Whether `text` is one of `PLACEHOLDERS`, or Logfire's scrub marker (`_SCRUBBED`):
    content not captured."""
    if not isinstance(text, str):
        return False
    if len(text) > _LONGEST_PLACEHOLDER and not (text[:1].isspace() or text[-1:].isspace()):
        return False  # a long text would be stripped (copied) for nothing: most are long
    text = text.strip()
    return text in PLACEHOLDERS or (text[:1] == "[" and _SCRUBBED.fullmatch(text) is not None)


class ContentError(ValueError):
    """Content that claims a shape and does not have it; the message says where and what."""


def _dumps(value: JsonValue, sort_keys: bool) -> str:
    option = orjson.OPT_NON_STR_KEYS | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        return orjson.dumps(value, option=option).decode()
    except TypeError:
        # orjson refuses integers beyond 64 bits, which JSON text may still carry.
        return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False,
                          default=str)


def canonical_json(value: JsonValue) -> str:
    """Sorted-key, compact JSON text: the one form arguments and schemas are compared in."""
    return _dumps(value, sort_keys=True)


def parse_json(text: str, where: str) -> JsonValue:
    """Parse JSON text, raising ContentError that names `where` when it is not JSON, and
    says so when the text stops inside a value: the SDKs cut every string attribute at
    `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT` characters (opentelemetry-python `BoundedAttributes`
    `_clean_attribute_value`: `value[:max_len]`), as Collector processors may, and a cut
    message list loses the turn its span was in, so the user is told what to change."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        cut = ""
        if exc.msg.startswith("unexpected end of data") and text.lstrip()[:1] in "[{":
            cut = (f"; it stops inside a value after {len(text):,} characters: cut short, "
                   "as an attribute length limit (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT) or a "
                   "Collector processor does, so this span's turn may be split or incomplete")
        raise ContentError(f"{where}: not valid JSON ({exc}){cut}") from None


def try_json(text: str) -> tuple[bool, JsonValue]:
    """(True, value) when `text` is JSON, else (False, None)."""
    try:
        return True, orjson.loads(text)
    except orjson.JSONDecodeError:
        return False, None


def usage_tokens(usage: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """(input, output) tokens of a provider's usage object: OpenAI's `prompt_tokens` /
    `completion_tokens`, else Anthropic's and the Responses API's `input_tokens` /
    `output_tokens`."""
    return (
        as_int(usage.get("prompt_tokens", usage.get("input_tokens"))),
        as_int(usage.get("completion_tokens", usage.get("output_tokens"))),
    )


def python_literal(text: str) -> object | None:
    """`text` read as a Python literal (a repr some instrumentations write where JSON
    belongs: `{'city': 'Paris'}`), without evaluating code; None when it is none."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def structured(value: AttrValue | JsonValue, where: str) -> JsonValue:
    """A value that is JSON by contract: a JSON string is parsed, a structured AnyValue kept."""
    if isinstance(value, str):
        return parse_json(value, where)
    if isinstance(value, bytes):
        return parse_json(value.decode("utf-8", errors="replace"), where)
    return value


def load(attributes: Mapping[str, AttrValue], key: str, problems: list[str]) -> JsonValue:
    """`attributes[key]`, JSON by contract (`structured`); None when absent, and when it
    is not JSON, which `problems` records."""
    if key not in attributes:
        return None
    try:
        return structured(attributes[key], key)
    except ContentError as exc:
        problems.append(str(exc))
        return None


def json_or_text(value: AttrValue | JsonValue) -> JsonValue:
    """A string that may be JSON text or plain text (MLflow JSON-encodes every attribute
    value, plain strings included): parsed when it is JSON, else kept."""
    if isinstance(value, str):
        ok, parsed = try_json(value)
        return parsed if ok else value
    return value


def canonical_arguments(value: JsonValue) -> str:
    """Tool-call arguments as canonical JSON text, whether given as object or JSON string.

    An empty string means "no arguments" (OpenAI streams send it); a string that is not
    JSON is kept as a JSON string so nothing is lost.
    """
    if value is None:
        return "{}"
    if isinstance(value, str):
        if not value.strip():
            return "{}"
        ok, parsed = try_json(value)
        return canonical_json(parsed if ok else value)
    return canonical_json(value)


def compact_json(value: JsonValue) -> str:
    """Compact JSON text keeping key order: how SDKs serialize structured data for a model."""
    return _dumps(value, sort_keys=False)


def result_text(value: JsonValue) -> str:
    """A tool result as the model saw it: a string stays; structured becomes compact JSON.

    Key order is kept, not sorted: the model read the keys in the order the tool returned
    them, and the corpus ground truth shows exactly that text.
    """
    if isinstance(value, str):
        return value
    return compact_json(value)


def as_int(value: AttrValue) -> int | None:
    """Token counts arrive as int, double or decimal string (pitfall 7)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        text = value.strip().strip('"')
        try:
            return int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                return None
            return int(number) if number.is_integer() else None
    return None


def as_str(value: AttrValue | JsonValue) -> str | None:
    """A non-empty string, or None."""
    if isinstance(value, str):
        return value if value != "" else None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    return None


def first_str(attributes: Mapping[str, AttrValue], keys: Iterable[str]) -> str | None:
    """The first of `keys` holding a non-empty string (`as_str`), or None."""
    for key in keys:
        if key in attributes and (text := as_str(attributes[key])):
            return text
    return None


def jsonable(value: AttrValue) -> JsonValue:
    """An AttrValue with bytes made JSON-safe (base64, `model.bytes_as_base64`'s rule)."""
    if isinstance(value, bytes):
        return bytes_as_base64(value)
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    return value


def unflatten(attributes: Mapping[str, AttrValue], prefix: str) -> JsonValue:
    """The value under `prefix` rebuilt from flattened keys (see module docstring), or None."""
    dotted = prefix + "."
    root: dict[str, Any] = {}
    found = False
    for key, value in attributes.items():
        if not key.startswith(dotted):
            continue
        found = True
        segments = key[len(dotted) :].split(".")
        node = root
        for segment in segments[:-1]:
            child = node.get(segment)
            if not isinstance(child, dict):
                child = {}
                node[segment] = child
            node = child
        node[segments[-1]] = value
    return _listify(root) if found else None


def _listify(node: JsonValue) -> JsonValue:
    if not isinstance(node, dict):
        return node
    items = {k: _listify(v) for k, v in node.items()}
    # Only segments followed by more keys were made containers, so an all-digit dict of
    # containers is an index; a trailing digit key holding a scalar stays a key.
    if items and all(k.isdigit() and isinstance(v, dict | list) for k, v in items.items()):
        return [items[k] for k in sorted(items, key=int)]
    return items
