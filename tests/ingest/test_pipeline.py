"""The ingest stage end to end on the real corpus: idempotent, order-independent, resumable."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import astuple, replace
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from turnscore.ingest.pipeline import Progress, file_key, ingest_paths
from turnscore.ingest.store import TurnStore
from turnscore.ingest.turn import Turn

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
SCENARIOS = sorted(
    p
    for p in CORPUS.glob("*/*.json")
    if p.name != "ground_truth.json"
    and not p.name.endswith(".logs.json")
    and "protojson" not in p.name
)
Span = dict[str, Any]


def _logs_of(scenario: Path) -> list[Path]:
    logs = scenario.with_name(scenario.stem + ".logs.json")
    return [logs] if logs.exists() else []


def _spans(doc: dict[str, Any]) -> list[Span]:
    return [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def _split(
    doc: dict[str, Any], later: Callable[[Span], bool]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The request as two requests: spans for which `later` is false, then the rest."""
    out: tuple[dict[str, Any], dict[str, Any]] = ({"resourceSpans": []}, {"resourceSpans": []})
    for rs in doc["resourceSpans"]:
        for target, keep in ((out[0], lambda s: not later(s)), (out[1], later)):
            scopes = [
                {**ss, "spans": [s for s in ss["spans"] if keep(s)]} for ss in rs["scopeSpans"]
            ]
            scopes = [ss for ss in scopes if ss["spans"]]
            if scopes:
                target["resourceSpans"].append({**rs, "scopeSpans": scopes})
    return out


def _content(t: Turn) -> tuple[Any, ...]:
    """A turn without lineage (which run wrote it, which file its spans came from)."""
    return astuple(replace(t, ingest_id="", source=""))


def _turns(out: Path) -> list[Turn]:
    return sorted(TurnStore(out, "read").read_all(), key=lambda t: t.turn_id)


def _span_rows(out: Path) -> list[tuple[Any, ...]]:
    """Stored records without lineage, and without the lookup keys, which record what was
    known when the record was stored."""
    rows = []
    for path in sorted((out / "spans").rglob("part-*.parquet")):
        lineage = ["ingest_id", "source", "position", "conversation_id", "history_key"]
        lineage.append("prefix_keys")
        table = pq.read_table(path).drop_columns(lineage)
        rows += [tuple(r.values()) for r in table.to_pylist()]
    return sorted(rows, key=repr)


def _whole(scenario: Path, out: Path) -> list[tuple[Any, ...]]:
    ingest_paths([scenario, *_logs_of(scenario)], out)
    return [_content(t) for t in _turns(out)]


def _by_start(fraction: float) -> Callable[[list[Span]], Callable[[Span], bool]]:
    def choose(spans: list[Span]) -> Callable[[Span], bool]:
        starts = sorted(int(s["startTimeUnixNano"]) for s in spans)
        cut = starts[int(len(starts) * fraction)]
        return lambda s: int(s["startTimeUnixNano"]) >= cut

    return choose


def _roots(spans: list[Span]) -> Callable[[Span], bool]:
    return lambda s: not s.get("parentSpanId")


def _last_span(spans: list[Span]) -> Callable[[Span], bool]:
    last = max(spans, key=lambda s: int(s["startTimeUnixNano"]))["spanId"]
    return lambda s: s["spanId"] == last


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: f"{p.parent.name}/{p.stem}")
@pytest.mark.parametrize(
    "later",
    [_by_start(0.5), _by_start(0.25), _roots, _last_span],
    ids=["half", "quarter", "roots", "last"],
)
def test_spans_arriving_in_two_files_give_the_same_turns_as_one(
    scenario: Path, later: Callable[[list[Span]], Callable[[Span], bool]], tmp_path: Path
) -> None:
    doc = json.loads(scenario.read_text())
    first, second = _split(doc, later(_spans(doc)))
    (tmp_path / "a.json").write_text(json.dumps(first))
    (tmp_path / "b.json").write_text(json.dumps(second))
    ingest_paths([tmp_path / "a.json", *_logs_of(scenario)], tmp_path / "split")
    batch = ingest_paths([tmp_path / "b.json"], tmp_path / "split")
    assert [_content(t) for t in _turns(tmp_path / "split")] == _whole(scenario, tmp_path / "whole")
    assert batch.new_spans == len(_spans(second))
    # The other way round: the later spans first, the earlier ones late.
    ingest_paths([tmp_path / "b.json"], tmp_path / "reversed")
    ingest_paths([tmp_path / "a.json", *_logs_of(scenario)], tmp_path / "reversed")
    assert [_content(t) for t in _turns(tmp_path / "reversed")] == [
        _content(t) for t in _turns(tmp_path / "whole")
    ]
    assert _span_rows(tmp_path / "split") == _span_rows(tmp_path / "whole")


def test_a_late_final_span_rebuilds_the_turn_under_its_id(tmp_path: Path) -> None:
    scenario = CORPUS / "pydantic-ai" / "single_tool.json"
    doc = json.loads(scenario.read_text())
    first, second = _split(doc, _last_span(_spans(doc)))
    (tmp_path / "a.json").write_text(json.dumps(first))
    (tmp_path / "b.json").write_text(json.dumps(second))
    ingest_paths([tmp_path / "a.json"], tmp_path / "out")
    [before] = _turns(tmp_path / "out")
    batch = ingest_paths([tmp_path / "b.json"], tmp_path / "out")
    [after] = _turns(tmp_path / "out")
    assert (before.status, after.status) == ("incomplete", "ok")
    assert after.turn_id == before.turn_id
    assert after.content_hash != before.content_hash
    assert after.final_answer == "17 * 23 + 4 = 395."
    assert batch.removed_turn_ids == ()
    assert after.ingest_id == batch.ingest_id


def test_ingesting_the_same_input_again_changes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = ingest_paths([CORPUS], out)
    spans, turns = _span_rows(out), _turns(out)
    again = ingest_paths([CORPUS], out)  # no known keys: every file is read again
    assert first.new_spans > 200 and first.turns > 40
    assert (again.new_spans, again.new_logs) == (0, 0)
    # The first run may write a turn twice (a trace carried to the last group rebuilds the
    # conversation it continues by history); the second writes each turn once.
    assert again.turns == len(turns) <= first.turns
    assert _span_rows(out) == spans
    assert _turns(out) == turns  # lineage included: unchanged rows keep their ingest_id


def test_identical_spans_in_another_file_are_one_span(tmp_path: Path) -> None:
    src = CORPUS / "otel-genai-openai" / "parallel_tools.json"
    reshaped = tmp_path / "in" / "copy.json"
    reshaped.parent.mkdir()
    reshaped.write_text(json.dumps(json.loads(src.read_text()), indent=3))
    out = tmp_path / "out"
    ingest_paths([src], out)
    turns, spans = _turns(out), _span_rows(out)
    batch = ingest_paths([reshaped], out)
    assert batch.spans == len(spans) and batch.new_spans == 0
    assert _turns(out) == turns and _span_rows(out) == spans


def test_known_and_repeated_files_are_skipped_by_content(tmp_path: Path) -> None:
    src = CORPUS / "pydantic-ai" / "no_tool.json"
    twin = tmp_path / "twin.json"
    shutil.copy(src, twin)
    batch = ingest_paths([src, twin], tmp_path / "out")
    assert [f.path for f in batch.files] == [src]
    assert [(s.path, s.reason) for s in batch.skipped] == [(twin, f"same content as {src}")]
    again = ingest_paths([twin], tmp_path / "out", known_file_keys={file_key(src)})
    assert again.files == () and again.skipped[0].reason == "already ingested"


def test_small_groups_give_the_same_result_as_one(tmp_path: Path) -> None:
    ingest_paths([CORPUS], tmp_path / "one")
    many = ingest_paths([CORPUS], tmp_path / "many", group_bytes=1)
    assert len(many.files) > 40
    assert [_content(t) for t in _turns(tmp_path / "many")] == [
        _content(t) for t in _turns(tmp_path / "one")
    ]


def test_bad_input_is_reported_and_the_rest_ingested(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(CORPUS / "pydantic-ai" / "single_tool.json", folder / "good.json")
    (folder / "garbage.json").write_text('{"resourceSpans": [ this is not json')
    (folder / "notes.jsonl").write_text("hello")  # named as input: read, and not OTLP
    progress: list[Progress] = []
    batch = ingest_paths([folder], tmp_path / "out", progress=progress.append)
    sources = {Path(e.source).name for e in batch.errors}
    assert {"garbage.json", "notes.jsonl"} <= sources
    assert all(e.message for e in batch.errors)
    assert len(_turns(tmp_path / "out")) == 1
    assert [p.files_done for p in progress] == [1, 2, 3]
    assert progress[-1].bytes_done == progress[-1].bytes_total
    assert {f.path.name: f.errors > 0 for f in batch.files} == {
        "garbage.json": True,
        "good.json": False,
        "notes.jsonl": True,
    }


def test_a_rerun_after_a_crash_finishes_the_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"

    def crash(self: TurnStore, *args: Any) -> None:
        raise OSError("disk full")  # the process dies after storing spans, before turns

    with monkeypatch.context() as m:
        m.setattr(TurnStore, "replace", crash)
        with pytest.raises(OSError):
            ingest_paths([CORPUS / "strands_default"], out)
    assert _span_rows(out) and not (out / "turns").exists()
    batch = ingest_paths([CORPUS / "strands_default"], out)
    assert batch.new_spans == 0  # already stored by the crashed run
    assert [_content(t) for t in _turns(out)] == _whole_dir(
        CORPUS / "strands_default", tmp_path / "clean"
    )
    assert _span_rows(out) == _span_rows(tmp_path / "clean")


def _whole_dir(folder: Path, out: Path) -> list[tuple[Any, ...]]:
    ingest_paths([folder], out)
    return [_content(t) for t in _turns(out)]


def test_a_missing_path_stops_the_run(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope"):
        ingest_paths([tmp_path / "nope"], tmp_path / "out")


def test_a_span_id_reused_with_other_content_is_reported(tmp_path: Path) -> None:
    src = CORPUS / "pydantic-ai" / "no_tool.json"
    doc = json.loads(src.read_text())
    _spans(doc)[0]["name"] = "renamed"
    (tmp_path / "changed.json").write_text(json.dumps(doc))
    ingest_paths([src], tmp_path / "out")
    turns = _turns(tmp_path / "out")
    batch = ingest_paths([tmp_path / "changed.json"], tmp_path / "out")
    [error] = batch.errors
    assert "already stored with different content" in error.message
    assert error.span_id == _spans(doc)[0]["spanId"] and error.source.endswith("changed.json")
    assert _turns(tmp_path / "out") == turns  # the stored copy wins


def test_a_span_arriving_twice_with_other_content_in_one_batch_is_reported(
    tmp_path: Path,
) -> None:
    src = CORPUS / "pydantic-ai" / "no_tool.json"
    doc = json.loads(src.read_text())
    _spans(doc)[0]["name"] = "renamed"
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.json").write_text(src.read_text())
    (folder / "b.json").write_text(json.dumps(doc))
    batch = ingest_paths([folder], tmp_path / "out")
    [error] = batch.errors
    assert "arrived twice with different content; kept the first copy" in error.message
    assert error.span_id == _spans(doc)[0]["spanId"] and error.source.endswith("b.json")
    ingest_paths([folder / "a.json"], tmp_path / "first-only")
    only_first = [_content(t) for t in _turns(tmp_path / "first-only")]
    assert [_content(t) for t in _turns(tmp_path / "out")] == only_first  # the first copy wins


def test_an_unreadable_file_is_reported_not_recorded(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(CORPUS / "pydantic-ai" / "no_tool.json", folder / "good.json")
    (folder / "gone.json").symlink_to(tmp_path / "deleted-while-listing.json")
    batch = ingest_paths([folder], tmp_path / "out")
    [error] = batch.errors
    assert error.source.endswith("gone.json") and "cannot read file" in error.message
    assert [f.path.name for f in batch.files] == ["good.json"]
    assert len(_turns(tmp_path / "out")) == 1


@pytest.mark.parametrize("framework", ["pydantic-ai", "otel-openai-v2_latest-span-agentspans"])
def test_a_late_root_span_keeps_the_turn_id(framework: str, tmp_path: Path) -> None:
    doc = json.loads((CORPUS / framework / "single_tool.json").read_text())
    first, second = _split(doc, _roots(_spans(doc)))
    (tmp_path / "a.json").write_text(json.dumps(first))
    (tmp_path / "b.json").write_text(json.dumps(second))
    ingest_paths([tmp_path / "a.json"], tmp_path / "out")
    [before] = _turns(tmp_path / "out")
    batch = ingest_paths([tmp_path / "b.json"], tmp_path / "out")
    [after] = _turns(tmp_path / "out")
    assert after.turn_id == before.turn_id
    assert batch.removed_turn_ids == ()
