"""Storage URIs and manifest commits, on a local folder and on a real S3 API (moto)."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnscore.ingest.otlp import iter_input_files
from turnscore.ingest.storage import (
    Location,
    Manifest,
    StorageError,
    commit,
    committed,
    committed_files,
    exists,
    list_files,
    location,
    run_prefix,
    sweep_uncommitted,
)


@pytest.fixture(params=["s3", "file", "plain"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> Location:
    if request.param == "s3":
        bucket = request.getfixturevalue("bucket")
        return location(f"s3://{bucket}/data")
    if request.param == "file":
        return location(f"file://{tmp_path}/data")
    return location(tmp_path / "data")


def test_write_list_read_round_trip(root: Location) -> None:
    root.child("in/a.json").write_bytes(b'{"resourceSpans": []}')
    root.child("in/sub/b.jsonl").write_bytes(b"x")
    root.child("in/.hidden.json").write_bytes(b"hidden")
    root.child("in/.skip/c.json").write_bytes(b"skipped")
    files = list_files(root.child("in"))
    assert [(f.location.uri.removeprefix(root.uri), f.size) for f in files] == [
        ("/in/a.json", 21), ("/in/sub/b.jsonl", 1)]
    assert files[0].location.read_bytes() == b'{"resourceSpans": []}'
    jsonl = list_files(root.child("in"), lambda name: name.endswith(".jsonl"))
    assert [f.location.uri for f in jsonl] == [f"{root.uri}/in/sub/b.jsonl"]
    one = list_files(root.child("in/a.json"))
    assert [f.size for f in one] == [21]


def test_files_come_in_the_order_local_ingest_walks_them(root: Location, tmp_path: Path) -> None:
    """Folder by folder, as `Path`s sort: `a/x.json` before `a-b/x.json`, though `-` sorts
    before `/`. Of two files with one content the first is read, by either engine."""
    local = tmp_path / "local"
    for rel in ("a-b/x.json", "a/x.json", "a.b/x.json", "a/y/x.json"):
        root.child(f"in/{rel}").write_bytes(b"{}")
        (local / rel).parent.mkdir(parents=True, exist_ok=True)
        (local / rel).write_bytes(b"{}")
    listed = [f.location.uri.removeprefix(f"{root.uri}/in/") for f in list_files(root.child("in"))]
    walked = [p.relative_to(local).as_posix() for p in iter_input_files([local])]
    assert listed == walked == ["a/x.json", "a/y/x.json", "a-b/x.json", "a.b/x.json"]


def test_exists(root: Location) -> None:
    root.child("in/sub/a.json").write_bytes(b"{}")
    assert exists(root.child("in")) and exists(root.child("in/sub/a.json"))
    assert not exists(root.child("nowhere"))


def test_missing_folder_and_bad_scheme_are_clear_errors(root: Location) -> None:
    with pytest.raises(StorageError, match="no such file or folder"):
        list_files(root.child("nowhere"))
    with pytest.raises(StorageError, match="unknown storage scheme"):
        location("ftp://host/x")
    with pytest.raises(StorageError, match="no bucket"):
        location("s3://")


def test_readers_see_only_committed_runs(root: Location) -> None:
    done = Manifest("r1", {"turns": (f"{run_prefix('turns', 'r1')}/part-0.parquet",)})
    root.child(done.files["turns"][0]).write_bytes(b"committed")
    commit(root, done)
    # A run killed after writing its data, before its manifest:
    root.child(run_prefix("turns", "r2"), "part-0.parquet").write_bytes(b"half a run")
    assert [m.run_id for m in committed(root)] == ["r1"]
    assert [f.read_bytes() for f in committed_files(root, "turns")] == [b"committed"]
    # The next run (under the writer lock) removes what the dead one left.
    assert sweep_uncommitted(root, ["turns", "spans"]) == ["turns/run=r2"]
    assert [f.location.uri.removeprefix(root.uri) for f in list_files(root.child("turns"))
            ] == ["/turns/run=r1/part-0.parquet"]


def test_manifest_names_only_its_own_run_prefix(root: Location) -> None:
    with pytest.raises(StorageError, match="not under"):
        commit(root, Manifest("r1", {"turns": ("turns/run=r0/part-0.parquet",)}))
    assert committed(root) == []


def test_a_damaged_manifest_is_named(root: Location) -> None:
    root.child("_manifests/r9.json").write_bytes(b"{not json")
    with pytest.raises(StorageError, match=r"r9\.json: not a turnscore manifest"):
        committed(root)
