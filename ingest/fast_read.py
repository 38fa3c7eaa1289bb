"""Reading and decoding files on worker processes while the main process assembles.

Reading (parsing OTLP into raw records) and decoding (the convention decoders) take more
than half of an ingest and are pure per span, so `prefetch` runs them for the next files
on `workers - 1` processes while the caller (the last of the `workers`) stores and
assembles the current group; a third process on two cores was slower. Each file
comes back as its records plus, for every span, the `decode_span` result computed without
log records; `decode_spans(..., decoded_alone=...)` uses those for spans that no content
log joins and decodes the rest, so the spans are exactly what the main process would make.

Results come back in input order, at most `2 * workers` files ahead of the consumer, so
memory holds a few files' records beyond the current group. Results are pickled back, a
cost of about a third of the decoding they save.
"""

from __future__ import annotations

import logging
import multiprocessing
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import BrokenExecutor, Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from turnscore.ingest.decode import decode_span
from turnscore.ingest.formats import DEFAULT_LIMITS, Limits
from turnscore.ingest.model import Span
from turnscore.ingest.otlp import Record, read_file
from turnscore.ingest.records import WHOLE_FILE, InputError, RawSpan

__all__ = ["Decoded", "FileRead", "prefetch", "read_and_decode", "read_whole"]

logger = logging.getLogger(__name__)

Decoded = tuple[Span, InputError | None]


@dataclass(frozen=True, slots=True)
class FileRead:
    """One file's records in file order, and each span's decoding (same order as spans)."""

    path: Path
    records: list[Record]
    decoded: list[Decoded]

    def by_record(self) -> dict[int, Decoded]:
        """Decodings keyed by the identity of the RawSpan they belong to."""
        spans = (r for r in self.records if isinstance(r, RawSpan))
        return {id(raw): d for raw, d in zip(spans, self.decoded, strict=True)}


def read_whole(path: Path, read: Callable[[], Iterable[Record]]) -> list[Record]:
    """Every record `read` gives for the file at `path`, or, when reading it fails in a way
    the readers do not report (a bug, memory), one error naming the file and the failure,
    and none of its records: one file never stops an ingest. The traceback is logged, so
    a bug stays visible."""
    try:
        return list(read())
    except Exception as exc:
        logger.exception("%s: reading the file failed", path)
        return [InputError(str(path), WHOLE_FILE, f"reading the file failed: {_failure(exc)}")]


def _failure(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]


def read_and_decode(
    path: Path, case_id_attribute: str | None, limits: Limits = DEFAULT_LIMITS
) -> FileRead:
    records = read_whole(path, lambda: read_file(path, limits))
    decoded = [
        decode_span(r, (), case_id_attribute=case_id_attribute)
        for r in records
        if isinstance(r, RawSpan)
    ]
    return FileRead(path, records, decoded)


def prefetch(
    paths: Iterable[Path],
    workers: int,
    case_id_attribute: str | None,
    limits: Limits = DEFAULT_LIMITS,
) -> Iterator[FileRead]:
    """`read_and_decode` of every path, in order, on `workers - 1` (at least 1) processes."""
    # fork: workers start at once and share the loaded modules; spawn would re-import all.
    context = multiprocessing.get_context("fork")
    ahead = 2 * workers
    pending: deque[tuple[Path, Future[FileRead] | None]] = deque()
    with ProcessPoolExecutor(max_workers=max(1, workers - 1), mp_context=context) as pool:
        for path in paths:
            try:
                future: Future[FileRead] | None = pool.submit(
                    read_and_decode, path, case_id_attribute, limits
                )
            except BrokenExecutor:  # a worker died: the rest is read here
                future = None
            pending.append((path, future))
            if len(pending) >= ahead:
                yield _result(*pending.popleft(), case_id_attribute, limits)
        while pending:
            yield _result(*pending.popleft(), case_id_attribute, limits)


def _result(
    path: Path, future: Future[FileRead] | None, case_id_attribute: str | None, limits: Limits
) -> FileRead:
    """The worker's reading of `path`; read here when the worker died (killed for memory,
    say) or could not send it back."""
    if future is None:
        return read_and_decode(path, case_id_attribute, limits)
    try:
        return future.result()
    except Exception as exc:
        logger.warning("reading %s on a worker failed (%s); reading it here", path, _failure(exc))
        return read_and_decode(path, case_id_attribute, limits)
