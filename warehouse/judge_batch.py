"""Batch scoring: judged scorers whose judge says `batch = true` go through the Batch API
(`scorers.judge.batch`), across runs, recorded in `judge_batches` / `judge_batch_items`.

`BatchJudge` is the judge runner a score run gets when some judge is batched:
1. When the run starts, every unfinished batch is polled. An ended one (completed, expired,
   cancelled, failed) has its output and error files downloaded into its items in one
   transaction; a request with no line in either ended without a result. A batch still
   `submitting` (the process died around `POST /batches`, before its id was recorded) is
   looked for by our key in the batches' metadata: adopted when found, else abandoned, and
   its turns are sent again. A poll that fails leaves the batch for the next run.
2. Each pending turn of a batched scorer, in the engine's order of business:
   - already in an unfinished batch with the same content: left pending (None), not sent
     again;
   - in a collected batch with the same cache key (same content, prompt, model and
     parameters): the engine judges it with `ReplayClient`, so the batch's reply is parsed,
     cached and costed (at the batch price) exactly as a synchronous reply; a request the
     batch failed is an `error` row, and the item is used, so the next run sends it again;
   - otherwise the engine judges it with `CaptureClient`: prechecks and cache hits score
     at once, and the rest become lines of one new batch for this call.
3. Submitting records the intent first (the batch row and its items, one transaction),
   then uploads, creates the batch with our key as metadata, and records the provider's id
   (in `judge_batches` and in the run's `runs.judge_batches`). A refusal (a 4xx) makes the
   turns `error` rows; a failure that may be transient abandons the batch before it exists
   (upload) or leaves it `submitting` to be reconciled (create).

Budgets: each batched turn counts as one call when it is sent (`--max-calls`), and its cost
counts towards `--max-cost` when its result is collected (the price is known only then);
collecting is never stopped by a budget, as the results are already paid for.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb
import pyarrow as pa

from turnscore.ingest.turn import Turn
from turnscore.scorers.base import Case, Score
from turnscore.scorers.judge.batch import (
    ENDED,
    BatchApi,
    BatchApiError,
    BatchStatus,
    CaptureClient,
    LineResult,
    Replay,
    ReplayClient,
    batch_priced,
    custom_id,
    parse_results,
    request_line,
)
from turnscore.scorers.judge.client import ChatClient
from turnscore.scorers.judge.config import Budget, JudgeConfig, JudgeSettings
from turnscore.scorers.judge.engine import BatchResult, JudgeCache, JudgeEngine, cache_key
from turnscore.scorers.judge.render import render
from turnscore.scorers.judged import SPECS, make_judge_runner
from turnscore.warehouse.db import transaction

log = logging.getLogger(__name__)

INSERT_BATCH = """
INSERT INTO judge_batches (batch_key, scorer, model, base_url, state, requests, run_id,
                           submitted_at)
VALUES (?, ?, ?, ?, 'submitting', ?, ?, ?)
"""
INSERT_ITEMS = """
INSERT INTO judge_batch_items (batch_key, custom_id, turn_id, scorer, content_hash, cache_key)
SELECT $batch_key, custom_id, turn_id, $scorer, content_hash, cache_key FROM _batch_items
"""
SET_OPEN = """
UPDATE judge_batches SET state = 'open', batch_id = ?, input_file_id = ?, status = ?
WHERE batch_key = ?
"""
SET_STATE = "UPDATE judge_batches SET state = ?, error = ? WHERE batch_key = ?"
ADD_RUN_BATCH = """
UPDATE runs SET judge_batches = list_append(coalesce(judge_batches, []::VARCHAR[]), ?)
WHERE run_id = ?
"""
SELECT_UNFINISHED = """
SELECT batch_key, scorer, state, batch_id, submitted_at FROM judge_batches
WHERE state IN ('submitting', 'open') ORDER BY submitted_at
"""
SET_RESULTS = """
UPDATE judge_batch_items AS i SET reply = r.reply, error = r.error FROM _batch_results AS r
WHERE i.batch_key = $batch_key AND i.custom_id = r.custom_id
"""
SET_MISSING = """
UPDATE judge_batch_items SET error = ? WHERE batch_key = ? AND reply IS NULL AND error IS NULL
"""
SET_COLLECTED = """
UPDATE judge_batches SET state = 'collected', status = ?, collected_at = ?,
    collected_run_id = ?, turnaround_ms = ?, error = ?
WHERE batch_key = ?
"""
SELECT_ITEMS = """
SELECT i.turn_id, i.batch_key, i.custom_id, i.content_hash, i.cache_key, i.reply, i.error,
       b.state, b.turnaround_ms
FROM judge_batch_items AS i JOIN judge_batches AS b USING (batch_key)
WHERE i.scorer = ? AND i.used_run_id IS NULL
  AND b.state IN ('submitting', 'open', 'collected')
  AND i.turn_id IN (SELECT unnest(?::VARCHAR[]))
ORDER BY b.submitted_at
"""
MARK_USED = "UPDATE judge_batch_items SET used_run_id = ? WHERE batch_key = ? AND custom_id = ?"


@dataclass(frozen=True, slots=True)
class _Item:
    batch_key: str
    custom_id: str
    content_hash: str
    cache_key: str
    replay: Replay
    collected: bool


class BatchJudge:
    """The judge runner when some judge is batched (see the module docstring); the other
    scorers go to `engine` unchanged. Close it when the run ends."""

    def __init__(self, engine: JudgeEngine, cache: JudgeCache, con: duckdb.DuckDBPyConnection,
                 run_id: str, *, env: Mapping[str, str] | None = None) -> None:
        self.engine, self.con, self.run_id, self.env = engine, con, run_id, env
        self._captures: dict[JudgeConfig, CaptureClient] = {}
        self._replays: dict[JudgeConfig, ReplayClient] = {}
        self._apis: dict[JudgeConfig, tuple[ChatClient, BatchApi]] = {}
        self._loop = asyncio.new_event_loop()
        self.notes: list[str] = []
        """Said once in the run's summary (`ScoreReport.judge_notes`)."""
        sync_client = engine.client_factory
        engine.client_factory = lambda c: self._capture(c) if c.batch else sync_client(c)
        settings = engine.settings
        self.replayer = make_judge_runner(
            JudgeSettings(batch_priced(settings.default),
                          {k: batch_priced(v) for k, v in settings.per_scorer.items()}),
            Budget(), cache, env=env)
        self.replayer.client_factory = self._replay
        self.collect()

    def close(self) -> None:
        for client, _ in self._apis.values():
            self._loop.run_until_complete(client.__aexit__(None, None, None))
        self._apis.clear()
        self._loop.close()
        self.replayer.close()

    def _capture(self, config: JudgeConfig) -> CaptureClient:
        return self._captures.setdefault(config, CaptureClient(config, env=self.env))

    def _replay(self, config: JudgeConfig) -> ReplayClient:
        return self._replays.setdefault(config, ReplayClient(config, env=self.env))

    def _api(self, config: JudgeConfig) -> BatchApi:
        if config not in self._apis:
            client = self._loop.run_until_complete(ChatClient(config, env=self.env).__aenter__())
            self._apis[config] = (client, BatchApi(client))
        return self._apis[config][1]

    # -- 1. collecting ---------------------------------------------------------------------

    def collect(self) -> None:
        """Poll every unfinished batch; download the ended ones into their items."""
        for key, scorer, state, batch_id, submitted_at in self.con.execute(
                SELECT_UNFINISHED).fetchall():
            config = self.engine.settings.for_scorer(scorer)
            if not config.is_llm:
                log.warning("batch %s of %s: no LLM judge configured to poll it", key, scorer)
                continue
            api = self._api(config)
            try:
                if state == "submitting":
                    found = self._loop.run_until_complete(api.find(key, submitted_at))
                    if found is None:
                        log.warning("batch %s was never created; its turns are sent again", key)
                        self.con.execute(SET_STATE, ["abandoned", "never created", key])
                        continue
                    self._opened(key, found, None)
                    batch_id = found.batch_id
                status = self._loop.run_until_complete(api.get(batch_id))
                if status.status in ENDED:
                    self._download(api, key, status)
                else:
                    log.info("batch %s (%s): %s", batch_id, scorer, status.status)
            except BatchApiError as exc:
                log.warning("batch %s (%s): polling failed, trying next run: %s", key, scorer,
                            exc)

    def _download(self, api: BatchApi, key: str, status: BatchStatus) -> None:
        results: list[LineResult] = []
        for file_id in (status.output_file_id, status.error_file_id):
            if file_id:
                content = self._loop.run_until_complete(api.content(file_id))
                results.extend(parse_results(content, f"batch {status.batch_id} file {file_id}"))
        missing = (f"batch {status.batch_id} {status.status}"
                   + (f" ({status.errors})" if status.errors else "")
                   + " without a result for this request")
        table = pa.table({"custom_id": [r.custom_id for r in results],
                          "reply": pa.array([r.reply for r in results], pa.string()),
                          "error": pa.array([r.error for r in results], pa.string())})
        with transaction(self.con):
            self.con.register("_batch_results", table)
            self.con.execute(SET_RESULTS, {"batch_key": key})
            self.con.unregister("_batch_results")
            self.con.execute(SET_MISSING, [missing, key])
            self.con.execute(SET_COLLECTED, [status.status, datetime.now(UTC), self.run_id,
                                             status.turnaround_ms, status.errors, key])
        log.info("batch %s %s: %d results collected", status.batch_id, status.status,
                 len(results))

    def _opened(self, key: str, status: BatchStatus, file_id: str | None) -> None:
        self.con.execute(SET_OPEN, [status.batch_id, file_id, status.status, key])
        self.con.execute(ADD_RUN_BATCH, [status.batch_id, self.run_id])

    # -- 2. scoring ------------------------------------------------------------------------

    def run(self, scorer: str, turns: Sequence[Turn], cases: Sequence[Case | None] = ()
            ) -> BatchResult:
        config = self.engine.settings.for_scorer(scorer)
        if not _is_batched(config):
            return self.engine.run(scorer, turns, cases)
        spec = self.engine.specs[scorer]
        items = self._items(scorer, [t.turn_id for t in turns])
        scores: list[Score | None] = [None] * len(turns)
        lines: list[tuple[int, Turn, dict[str, object], str]] = []
        used: list[tuple[str, str, str]] = []
        capture = self._capture(config)
        awaiting = 0
        for i, turn in enumerate(turns):
            item = items.get(turn.turn_id)
            if item is not None and item.content_hash != turn.content_hash:
                item = None
            if item is not None and not item.collected:
                awaiting += 1  # submitted, not back yet: never sent twice
                continue
            key = self._key(config, scorer, turn)
            if item is not None and item.cache_key == key:
                self._replay(batch_priced(config)).current = item.replay
                scores[i] = score = self.replayer.run(scorer, [turn]).scores[0]
                # Spent when the batch ran: it counts towards the run's --max-cost.
                self.engine.ledger.spend((score.usage.cost_usd or 0.0) if score else 0.0)
                used.append((self.run_id, item.batch_key, item.custom_id))
                continue
            before = len(capture.captured)
            scores[i] = self.engine.run(scorer, [turn]).scores[0]
            if len(capture.captured) > before:
                lines.append((i, turn, capture.captured.pop(), key))
        if awaiting:
            log.info("%s: %d turns await batch results", scorer, awaiting)
            self.notes.append(f"{scorer}: turns submitted in a batch stay pending until its "
                              "results are in (up to 24 h); a later run collects them")
        if used:
            self.con.executemany(MARK_USED, used)
        if lines:
            refused = self._submit(scorer, config, lines)
            if refused is not None:
                for i, _, _, _ in lines:
                    scores[i] = Score.failed(refused, judge=config.judge_id,
                                             prompt_sha=spec.prompt.sha)
        return BatchResult(tuple(scores), self.engine.stop,
                           tuple(dict.fromkeys([*self.engine.notes, *self.notes])))

    def _key(self, config: JudgeConfig, scorer: str, turn: Turn) -> str:
        spec = self.engine.specs[scorer]
        return cache_key(config, spec, render(spec.prompt, spec.sections(turn)))

    def _items(self, scorer: str, turn_ids: list[str]) -> dict[str, _Item]:
        """The newest live item per turn (later batches overwrite earlier ones)."""
        out: dict[str, _Item] = {}
        for (turn_id, key, cid, content_hash, ckey, reply, error, state,
             turnaround) in self.con.execute(SELECT_ITEMS, [scorer, turn_ids]).fetchall():
            out[turn_id] = _Item(key, cid, content_hash, ckey, Replay(reply, error, turnaround),
                                 state == "collected")
        return out

    # -- 3. submitting ---------------------------------------------------------------------

    def _submit(self, scorer: str, config: JudgeConfig,
                lines: list[tuple[int, Turn, dict[str, object], str]]) -> str | None:
        """Send `lines` as one batch; the reason when the endpoint refused it, else None."""
        api = self._api(config)
        key = uuid.uuid4().hex
        ids = [custom_id(scorer, t.turn_id, t.content_hash) for _, t, _, _ in lines]
        content = b"".join(request_line(cid, api.route.endpoint, body)
                           for cid, (_, _, body, _) in zip(ids, lines, strict=True))
        items = pa.table({"custom_id": ids, "turn_id": [t.turn_id for _, t, _, _ in lines],
                          "content_hash": [t.content_hash for _, t, _, _ in lines],
                          "cache_key": [k for _, _, _, k in lines]})
        with transaction(self.con):
            self.con.execute(INSERT_BATCH, [key, scorer, config.model, config.base_url,
                                            len(lines), self.run_id, datetime.now(UTC)])
            self.con.register("_batch_items", items)
            self.con.execute(INSERT_ITEMS, {"batch_key": key, "scorer": scorer})
            self.con.unregister("_batch_items")
        try:
            file_id = self._loop.run_until_complete(api.upload(content))
        except BatchApiError as exc:
            # Nothing was created: the turns go in a later batch (or fail, if refused).
            self.con.execute(SET_STATE, ["failed" if exc.definite else "abandoned", str(exc),
                                         key])
            log.warning("batch for %s not submitted: %s", scorer, exc)
            return f"batch submission refused: {exc}" if exc.definite else None
        try:
            status = self._loop.run_until_complete(api.create(file_id, key))
        except BatchApiError as exc:
            if exc.definite:
                self.con.execute(SET_STATE, ["failed", str(exc), key])
                return f"batch submission refused: {exc}"
            # It may exist anyway: the next run looks for it by key before sending again.
            log.warning("batch for %s: creating it failed (%s); the next run reconciles",
                        scorer, exc)
            return None
        self._opened(key, status, file_id)
        log.info("submitted batch %s for %s: %d requests", status.batch_id, scorer, len(lines))
        self.notes.append(f"{scorer}: submitted batch {status.batch_id} ({len(lines)} requests)")
        return None


def _is_batched(config: JudgeConfig) -> bool:
    return config.batch and config.is_llm


def batched(settings: JudgeSettings) -> bool:
    """Whether any judged scorer's judge is batched."""
    return any(_is_batched(settings.for_scorer(name)) for name in SPECS)


__all__ = ["BatchJudge", "batched"]
