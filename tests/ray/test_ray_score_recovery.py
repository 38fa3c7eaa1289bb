"""A Ray score run whose driver died after committing its manifest, before its DuckDB load:
the next run loads those scores instead of scoring the pairs again, and says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ray.cluster import Cluster
from tests.ray.parity import warehouse_rows
from tests.warehouse.turn_factory import changed, load_turns, make_turn
from turnscore.ingest.storage import committed, location
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.ray_score import run_ray_score
from turnscore.warehouse.score_run import score_turns

pytestmark = pytest.mark.ray

TURNS = 30


class _DriverDied(BaseException):
    """Stands for the driver process dying: not an error any layer handles."""


def warehouse(folder: Path) -> Path:
    con = open_warehouse(folder)
    load_turns(con, [make_turn(i) for i in range(TURNS)])
    con.close()
    return folder


def test_scores_committed_but_never_loaded_are_loaded_not_rescored(
        cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    expected = warehouse(tmp_path / "local")
    score_turns(expected, publish_snapshot=False)
    wh, root = warehouse(tmp_path / "wh"), f"file://{tmp_path}/data"

    def die(*args: object, **kwargs: object) -> None:  # after the manifest, before the load
        raise _DriverDied

    with monkeypatch.context() as patch:
        patch.setattr("turnscore.warehouse.ray_score._load", die)
        with pytest.raises(_DriverDied):
            run_ray_score(wh, root, ray_address=cluster.address, publish_snapshot=False)
    [dead] = committed(location(root))
    assert warehouse_rows(wh, "")["scores"] == []

    # One turn changed since: its recovered scores are stale, so it alone is scored again.
    con = open_warehouse(wh)
    load_turns(con, [changed(make_turn(0), "a new answer")])
    con.close()
    con = open_warehouse(expected)
    load_turns(con, [changed(make_turn(0), "a new answer")])
    con.close()
    score_turns(expected, publish_snapshot=False)

    # And a run that died before its manifest left a file no manifest names.
    stray = tmp_path / "data" / "scores" / "run=score-19700101T000000-dead" / "part-00000.parquet"
    stray.parent.mkdir(parents=True)
    stray.write_bytes(b"PAR1")
    rerun = run_ray_score(wh, root, ray_address=cluster.address, publish_snapshot=False)
    assert not stray.parent.exists()
    assert warehouse_rows(wh, "")["scores"] == warehouse_rows(expected, "")["scores"]
    manifests = {m.run_id: m for m in committed(location(root))}
    assert manifests[rerun.run_id].meta["recovered"] == [dead.run_id]
    con = open_warehouse(wh)
    by_run = dict(con.execute("SELECT run_id, list(DISTINCT turn_id) FROM scores "
                              "GROUP BY run_id").fetchall())
    con.close()
    # The scores are the dead run's, but those of the changed turn that read what changed.
    assert set(by_run) == {dead.run_id, rerun.run_id}
    assert by_run[rerun.run_id] == ["turn-00000"]
    assert len(by_run[dead.run_id]) >= TURNS - 1

    # Recovered once: the next run has nothing to do and reads no dead run again.
    again = run_ray_score(wh, root, ray_address=cluster.address, publish_snapshot=False)
    assert again.nothing_to_do
    assert warehouse_rows(wh, "")["scores"] == warehouse_rows(expected, "")["scores"]
