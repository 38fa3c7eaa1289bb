"""How ingest's work is cut (worker processes, batches) never changes its result; and
orjson line framing (`fast_json`, the reader's) yields the standard framing's documents.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.outputs import turn_rows
from turnscore.ingest import fast_json, formats
from turnscore.ingest.pipeline import IngestBatch, ingest_paths

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
JSON_FILES = sorted(CORPUS.rglob("*.json"))




def _summary(batch: IngestBatch) -> tuple[Any, ...]:
    return (
        batch.files, batch.skipped, batch.spans, batch.logs, batch.new_spans, batch.new_logs,
        batch.turns, batch.rebuilt_traces, batch.removed_turn_ids, sorted(batch.errors, key=repr),
    )


def test_late_spans_rebuild_alike_on_one_and_two_workers(tmp_path: Path) -> None:
    """Two batches: the second file's spans join traces stored by the first."""
    files = sorted(p for p in CORPUS.glob("otel-genai-openai/*.json")
                   if p.name != "ground_truth.json")
    assert len(files) > 2
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        first = ingest_paths(files[::2], out, ingest_id="a", workers=workers)
        second = ingest_paths([*files[1::2], *files[::2]], out, ingest_id="b", workers=workers,
                              known_file_keys={f.file_key for f in first.files})
        assert second.files and first.files
    assert turn_rows(tmp_path / "w2") == turn_rows(tmp_path / "w1")


def test_the_workers_switch_is_read_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = sorted(CORPUS.glob("pydantic-ai/*.json"))[0]
    shutil.copy(src, tmp_path / "in.json")
    monkeypatch.setenv("TURNSCORE_INGEST_WORKERS", "2")
    fast = ingest_paths([tmp_path / "in.json"], tmp_path / "fast", ingest_id="i")
    monkeypatch.setenv("TURNSCORE_INGEST_WORKERS", "not a number")
    plain = ingest_paths([tmp_path / "in.json"], tmp_path / "plain", ingest_id="i")
    assert _summary(fast) == _summary(plain) and fast.turns > 0


FRAMING_CASES = {
    "json lines": '{"a":1}\n{"b":2}\n',
    "blank lines and CRLF": '\n\n  {"a":1}\r\n\n{"b":[1,2]}',
    "pretty-printed": '{\n "a": 1\n}\n',
    "pretty-printed after a blank line": '  \n{\n "a": 1\n}\n{"b":2}\n',
    "two on a line": '{"a":1}{"b":2}\n{"c":3}',
    "NaN on line 2": '{"a":1}\n{"b":NaN}\n{"c":3}',
    "truncated line": '{"a":1}\n{"b":\n{"c":3}\n',
    "array": '[{"a":1},{"b":2}]',
    "integer beyond 64 bits": '{"a":123456789012345678901234567890}',
    "negative beyond 64 bits": '{"a":1}\n{"a":-9223372036854775809}',
    "array on line 2": '{"a":1}\n[1,2]\n',
    "empty": "",
    "lone surrogate": '{"a":"\\ud800"}\n{"b":1}',
    "duplicate keys": '{"a":1,"a":2}',
    "floats": '{"a":1e400,"b":0.1,"c":-0.0,"d":5e-324}',
    "long digit runs in strings": '{"traceId":"97467533473669166659a263f042c745"}\n{"t":"1'
    + "0" * 30 + '"}',
    "largest 64-bit integers": '{"a":18446744073709551615,"b":-9223372036854775808}',
    "integer beyond 64 bits after a space": '{"a": [1, 18446744073709551616]}',
}


@pytest.mark.parametrize("text", FRAMING_CASES.values(), ids=FRAMING_CASES.keys())
def test_fast_framing_yields_what_the_standard_framing_yields(text: str) -> None:
    expected = list(formats.iter_json_documents(text))
    assert list(fast_json.iter_json_documents(text, text.encode())) == expected


@pytest.mark.parametrize("path", JSON_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fast_framing_of_every_corpus_file(path: Path) -> None:
    payload = path.read_bytes()
    text, _ = formats.decode_text(payload)
    expected = list(formats.iter_json_documents(text))
    assert expected
    assert list(fast_json.iter_json_documents(text, payload)) == expected
