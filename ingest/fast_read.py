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

import multiprocessing
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from turnscore.ingest.decode import decode_span
from turnscore.ingest.model import Span
from turnscore.ingest.otlp import Record, read_file
from turnscore.ingest.records import InputError, RawSpan

__all__ = ["Decoded", "FileRead", "prefetch", "read_and_decode"]

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


def read_and_decode(path: Path, case_id_attribute: str | None) -> FileRead:
    records = list(read_file(path))
    decoded = [
        decode_span(r, (), case_id_attribute=case_id_attribute)
        for r in records
        if isinstance(r, RawSpan)
    ]
    return FileRead(path, records, decoded)


def prefetch(
    paths: Iterable[Path], workers: int, case_id_attribute: str | None
) -> Iterator[FileRead]:
    """`read_and_decode` of every path, in order, on `workers - 1` (at least 1) processes."""
    # fork: workers start at once and share the loaded modules; spawn would re-import all.
    context = multiprocessing.get_context("fork")
    ahead = 2 * workers
    pending: deque[Future[FileRead]] = deque()
    with ProcessPoolExecutor(max_workers=max(1, workers - 1), mp_context=context) as pool:
        for path in paths:
            pending.append(pool.submit(read_and_decode, path, case_id_attribute))
            if len(pending) >= ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
