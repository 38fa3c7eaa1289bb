"""The judge's reply cache, kept in the warehouse's `judge_cache` table.

A re-run (or a rerun after a crash) finds every reply already paid for. Rows are written
as soon as a reply arrives, outside the score batch's transaction: a reply is worth
keeping even when the batch that asked for it is lost.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from turnscore.scorers.judge.engine import CachedReply, JudgeCache

GET = """
SELECT scorer, model, prompt_version, reply::VARCHAR, input_tokens, output_tokens
FROM judge_cache WHERE cache_key = ?
"""
PUT = """
INSERT INTO judge_cache (cache_key, scorer, model, prompt_version, reply, input_tokens,
                         output_tokens)
VALUES (?, ?, ?, ?, ?::JSON, ?, ?)
ON CONFLICT (cache_key) DO NOTHING
"""

__all__ = ["DuckDBJudgeCache", "JudgeCache"]


class DuckDBJudgeCache:
    """`JudgeCache` over the open warehouse connection, for the score run `run_id`."""

    def __init__(self, con: duckdb.DuckDBPyConnection, run_id: str | None = None) -> None:
        self._con = con
        self.con = con
        """For what a judge records besides replies (`judge_batch`: its batches)."""
        self.run_id = run_id

    def get(self, key: str) -> CachedReply | None:
        rows = self._con.execute(GET, [key]).fetchall()
        if not rows:
            return None
        scorer, model, version, reply, tin, tout = rows[0]
        return CachedReply(scorer, model, version, reply, tin, tout)

    def put(self, key: str, entry: CachedReply) -> None:
        self._con.execute(PUT, [key, entry.scorer, entry.model, entry.prompt_version,
                                entry.reply, entry.input_tokens, entry.output_tokens])

    def put_all(self, entries: Sequence[tuple[str, CachedReply]]) -> None:
        """Many replies at once (those a Ray run's workers were paid for)."""
        if entries:
            self._con.executemany(PUT, [
                [key, e.scorer, e.model, e.prompt_version, e.reply, e.input_tokens,
                 e.output_tokens] for key, e in entries])
