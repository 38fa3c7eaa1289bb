"""How the rules judge of `tool_usage` ranks calls nobody here wrote: BFCL's gold calls and
systematic perturbations of them.

    python bench/judge_quality.py [--sample 200] [--data PATH] [--seed 7]

Data: the Berkeley Function Calling Leaderboard's question and answer files, shipped in the
`bfcl-eval` wheel on PyPI. The wheel is only read, never installed (its dependencies include
torch): an installed `bfcl_eval` package, `--data` (the wheel or its unpacked `data/` folder)
or `BFCL_DATA`, else `pip download --no-deps bfcl-eval==2026.3.23` into bench/out/bfcl.
When2Call (NVIDIA) is a Hugging Face data set with no PyPI package: reported as skipped.

Per BFCL turn (simple_python, multiple; `--sample` of each), the gold call (each argument at
its first accepted value; optional ones whose first accepted value is "" left out) and each
perturbation the turn allows: a wrong tool (multiple: another declared tool, its required
arguments filled from the gold call or the request), a dropped required argument, a wrong
type, an out-of-enum value, a missed call (no call at all) and an invented argument (a
parameter the schema does not declare). Printed: per kind, the share ranked strictly below
the gold call (target >= 95%), the gold calls' mean score and share at 10 (not penalised),
the mean of no-call turns where no tool fits (BFCL irrelevance; target >= 7.5) and where the
gold tool plainly does (the missed calls; target <= 4). Exits 0 either way: figures, not a
test (tests/scorers/judge cover each rule on small cases).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from turnscore.ingest.turn import Call, Tool, Turn
from turnscore.scorers.judge import rules

BFCL = "bfcl-eval==2026.3.23"
FILES = {"simple": "BFCL_v4_simple_python.json", "multiple": "BFCL_v4_multiple.json",
         "irrelevance": "BFCL_v4_irrelevance.json"}
KINDS = ("wrong tool", "dropped required", "wrong type", "out of enum", "missed call",
         "invented argument")
RANK_TARGET, IRRELEVANT_TARGET, MISSED_TARGET = 0.95, 7.5, 4.0
# BFCL's parameter types are Python's; JSON Schema's are these (as BFCL's own OpenAI
# handler converts them). `any` constrains nothing.
_TYPES = {"dict": "object", "float": "number", "tuple": "array", "list": "array",
          "int": "integer", "str": "string", "bool": "boolean"}
_T0 = datetime(2026, 1, 1, tzinfo=UTC)


def main(argv: list[str] | None = None) -> int:
    args = _options(argv)
    source = _locate(args.data)
    if source is None:
        print("BFCL data not found and could not be downloaded. Get it with\n"
              f"  python -m pip download --no-deps {BFCL} -d bench/out/bfcl\n"
              "or pass --data PATH (the wheel, or its bfcl_eval/data folder). Skipped.")
        return 0
    print(f"BFCL data: {source}")
    rng = random.Random(args.seed)
    ranked: dict[str, list[bool]] = {k: [] for k in KINDS}
    gold_scores: list[float] = []
    missed_scores: list[float] = []
    for category in ("simple", "multiple"):
        questions = _read(source, FILES[category])
        answers = {a["id"]: a for a in _read(source, FILES[category], answers=True)}
        for q in _sample(questions, args.sample, rng):
            gold_call = _gold(q, answers[q["id"]])
            if gold_call is None:
                continue
            tools = _tools(q)
            gold = rules.tool_usage(_turn(q, tools, [gold_call])).score
            gold_scores.append(gold)
            for kind, calls in _perturbations(q, tools, gold_call, rng):
                score = rules.tool_usage(_turn(q, tools, calls)).score
                ranked[kind].append(score < gold)
                if kind == "missed call":
                    missed_scores.append(score)
    irrelevant = [rules.tool_usage(_turn(q, _tools(q), [])).score
                  for q in _sample(_read(source, FILES["irrelevance"]), args.sample, rng)]
    _report(ranked, gold_scores, missed_scores, irrelevant)
    print("When2Call: no PyPI package ships it (a Hugging Face data set): skipped.")
    return 0


def _report(ranked: dict[str, list[bool]], gold: list[float], missed: list[float],
            irrelevant: list[float]) -> None:
    print(f"\n{'perturbation':<20}{'cases':>7}{'below gold':>12}  target >= {RANK_TARGET:.0%}")
    for kind, outcomes in ranked.items():
        share = sum(outcomes) / len(outcomes) if outcomes else float("nan")
        verdict = "ok" if share >= RANK_TARGET else "FAIL"
        print(f"{kind:<20}{len(outcomes):>7}{share:>12.1%}  {verdict}")
    perfect = sum(1 for s in gold if s == 10) / len(gold)
    print(f"\ngold calls: {len(gold)}, mean {statistics.mean(gold):.2f}, at 10: {perfect:.1%}")
    _target("no call, no tool fits (irrelevance)", irrelevant, IRRELEVANT_TARGET, ">=")
    _target("no call, a tool plainly fits (missed)", missed, MISSED_TARGET, "<=")


def _target(what: str, scores: list[float], target: float, op: str) -> None:
    mean = statistics.mean(scores)
    ok = mean >= target if op == ">=" else mean <= target
    print(f"{what}: {len(scores)} turns, mean {mean:.2f} (target {op} {target}): "
          f"{'ok' if ok else 'FAIL'}")


# --- Turns ----------------------------------------------------------------------------

def _turn(q: dict[str, Any], tools: tuple[Tool, ...], calls: list[Call]) -> Turn:
    request = "\n".join(m["content"] for m in q["question"][0] if m["role"] == "user")
    return Turn(turn_id=q["id"], trace_id=q["id"], conversation_id=q["id"], turn_index=0,
                started_at=_T0, ended_at=_T0, duration_ms=0.0, status="ok", request=request,
                tools=tools, tools_source="declared", calls=tuple(calls))


def _tools(q: dict[str, Any]) -> tuple[Tool, ...]:
    return tuple(Tool(f["name"], f.get("description"),
                      json.dumps(_json_schema(f.get("parameters") or {})))
                 for f in q["function"])


def _json_schema(spec: Any) -> Any:
    if isinstance(spec, list):
        return [_json_schema(s) for s in spec]
    if not isinstance(spec, dict):
        return spec
    out = {k: _json_schema(v) for k, v in spec.items() if k not in ("type", "default")}
    if isinstance(spec.get("properties"), dict):
        out["properties"] = {n: _json_schema(s) for n, s in spec["properties"].items()}
    kind = spec.get("type")
    if isinstance(kind, str) and kind != "any":
        out["type"] = _TYPES.get(kind, kind)
    return out


def _gold(q: dict[str, Any], answer: dict[str, Any]) -> Call | None:
    """The first accepted value of each argument; None for a turn of several calls."""
    if len(answer["ground_truth"]) != 1:
        return None
    [(name, accepted)] = answer["ground_truth"][0].items()
    spec = next(f for f in q["function"] if f["name"] == name)
    required = set(spec.get("parameters", {}).get("required", []))
    return Call(name, call_id="gold", arguments=json.dumps(_first(accepted, required)))


def _first(accepted: dict[str, Any], required: set[str]) -> dict[str, Any]:
    """Each argument at its first accepted value: "" means it may be left out, unless the
    schema requires it. Nested objects list accepted values per key too."""
    out = {}
    for key, values in accepted.items():
        values = [v for v in values if v != ""] if key in required else values
        if values and values[0] != "":
            out[key] = _nested(values[0])
    return out


def _nested(value: Any) -> Any:
    if isinstance(value, dict):
        return _first(value, set())
    if isinstance(value, list):
        return [_nested(v) for v in value]
    return value


def _perturbations(q: dict[str, Any], tools: tuple[Tool, ...], gold: Call,
                   rng: random.Random) -> Iterator[tuple[str, list[Call]]]:
    arguments = json.loads(gold.arguments or "{}")
    spec = next(f for f in q["function"] if f["name"] == gold.name)
    props = _json_schema(spec.get("parameters") or {}).get("properties", {})
    required = [r for r in spec.get("parameters", {}).get("required", []) if r in arguments]

    def call(name: str, args: dict[str, Any]) -> list[Call]:
        return [Call(name, call_id="p", arguments=json.dumps(args))]

    others = [t for t in tools if t.name != gold.name]
    if others:
        other = rng.choice(others)
        schema = json.loads(other.parameters or "{}")
        filled = {n: arguments.get(n, _placeholder(s)) for n, s in
                  schema.get("properties", {}).items() if n in schema.get("required", [])}
        yield "wrong tool", call(other.name, filled)
    if required:
        dropped = rng.choice(required)
        yield "dropped required", call(gold.name, {k: v for k, v in arguments.items()
                                                   if k != dropped})
    typed = [k for k in arguments if isinstance(props.get(k), dict) and "type" in props[k]]
    if typed:
        k = rng.choice(typed)
        yield "wrong type", call(gold.name, {**arguments, k: _wrong_type(props[k]["type"],
                                                                         arguments[k])})
    enums = [k for k in arguments if isinstance(props.get(k), dict) and props[k].get("enum")]
    if enums:
        k = rng.choice(enums)
        yield "out of enum", call(gold.name, {**arguments, k: f"not_{props[k]['enum'][0]}"})
    yield "missed call", []
    invented = next(n for n in ("extra_option", "verbose", "mode", "note")
                    if n not in props)
    yield "invented argument", call(gold.name, {**arguments, invented: "true"})


def _placeholder(schema: Any) -> Any:
    kind = schema.get("type") if isinstance(schema, dict) else None
    return {"string": "value", "integer": 1, "number": 1.0, "boolean": True, "array": [],
            "object": {}}.get(kind, "value")


def _wrong_type(kind: str, value: Any) -> Any:
    # A number's digits as text, a text as a number: the mistakes models make.
    if kind in ("integer", "number", "boolean"):
        return str(value)
    if kind == "string":
        return 42
    return "value"


# --- Data -----------------------------------------------------------------------------

def _locate(given: str | None) -> Path | None:
    for candidate in (given, os.environ.get("BFCL_DATA")):
        if candidate:
            if Path(candidate).exists():
                return Path(candidate)
            print(f"{candidate}: no such file or folder")
            return None
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))) / "data"
    folder = Path(__file__).parent / "out" / "bfcl"
    wheels = sorted(folder.glob("bfcl_eval-*.whl"))
    if not wheels:
        print(f"downloading {BFCL} (the wheel only, ~2 MB) into {folder}")
        done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                               BFCL, "-d", str(folder)], check=False)
        wheels = sorted(folder.glob("bfcl_eval-*.whl")) if done.returncode == 0 else []
    return wheels[-1] if wheels else None


def _read(source: Path, name: str, *, answers: bool = False) -> list[dict[str, Any]]:
    inner = f"possible_answer/{name}" if answers else name
    if source.suffix == ".whl":
        with zipfile.ZipFile(source) as wheel:
            text = wheel.read(f"bfcl_eval/data/{inner}").decode()
    else:
        text = (source / inner).read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _sample(rows: list[dict[str, Any]], n: int, rng: random.Random) -> list[dict[str, Any]]:
    return rows if n >= len(rows) else rng.sample(rows, n)


def _options(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sample", type=int, default=200, help="turns per BFCL category")
    p.add_argument("--data", default=None, help="the bfcl-eval wheel or its data folder")
    p.add_argument("--seed", type=int, default=7)
    return p.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
