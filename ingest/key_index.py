"""A persistent lookup from keys (trace ids, turn ids, conversation, history and response
keys) to the Parquet part files of a store that hold them, so a run costs what its input
costs.

`SpanStore` and `TurnStore` (`turnscore.ingest.store`) must find, for a batch, the stored
files and traces it touches. Reading the key columns of every stored file for that made
each run cost time and memory in proportion to the whole warehouse: a night of 10,000
new turns paid for the million already stored. This index answers the same questions
with B-tree lookups in a SQLite file beside the store (`sqlite3` is in the standard
library; a point lookup is what it is best at).

It is derived data, never the truth: `sync` compares it with the part files on disk by
(size, mtime) and re-indexes any file it does not know as written (a crash between a
Parquet write and the index commit, a file rewritten or removed by hand), so a stale or
deleted index costs one re-read of the files concerned, never a wrong answer. Callers
hold the warehouse writer lock; nothing here locks beyond SQLite's own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path

__all__ = ["KeyIndex", "KeyRow"]

KeyRow = tuple[str, str, str | None]
"""(kind, key, trace_id): `key` of `kind` sits in the file, in trace `trace_id`."""
CACHE_KIB = 64 << 10
"""SQLite page cache: a run's inserts land on random pages; keep them in memory."""
KeyReader = Callable[[Path], Iterable[KeyRow]]
"""Reads the key rows of one part file (the store knows its columns)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    file_id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS keys (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    trace_id TEXT,
    file_id INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS keys_by_key ON keys (kind, key);
CREATE INDEX IF NOT EXISTS keys_by_file ON keys (file_id);
"""
KNOWN_FILES = "SELECT path, size, mtime_ns FROM files"
FORGET_FILE_KEYS = "DELETE FROM keys WHERE file_id IN (SELECT file_id FROM files WHERE path = ?)"
FORGET_FILE = "DELETE FROM files WHERE path = ?"
RECORD_FILE = "INSERT INTO files (path, size, mtime_ns) VALUES (?, ?, ?) RETURNING file_id"
RECORD_KEY = "INSERT INTO keys (kind, key, trace_id, file_id) VALUES (?, ?, ?, ?)"
# No key on `wanted`: a repeated key only repeats a row the queries' DISTINCT drops, and
# keeping a unique index cost a third of a lookup. (`json_each` over one JSON array would
# be faster still, but it cuts a key at a NUL character.)
CREATE_WANTED = "CREATE TEMP TABLE IF NOT EXISTS wanted (key TEXT)"
CLEAR_WANTED = "DELETE FROM wanted"
ADD_WANTED = "INSERT INTO wanted (key) VALUES (?)"
# CROSS JOIN fixes the loop order in SQLite: each wanted key is looked up in the index
# (cost ~ keys wanted), never a scan of every key of a kind (cost ~ the whole store).
FILES_WITH = """
SELECT DISTINCT f.path FROM wanted w
CROSS JOIN keys k ON k.kind = ? AND k.key = w.key
JOIN files f ON f.file_id = k.file_id
"""
ANY_OF_KIND = "SELECT 1 FROM keys WHERE kind = ? LIMIT 1"
TRACES_WITH = """
SELECT DISTINCT k.trace_id FROM wanted w CROSS JOIN keys k ON k.kind = ? AND k.key = w.key
WHERE k.trace_id IS NOT NULL
"""


class KeyIndex:
    """The index of one store folder's part files, kept in `db_path`."""

    def __init__(self, db_path: Path, folder: Path) -> None:
        self.folder = folder
        db_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._con = _open(db_path)
        except sqlite3.DatabaseError:
            # Not a usable index (damaged, or not SQLite): it is derived, so start afresh.
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db_path}{suffix}").unlink(missing_ok=True)
            self._con = _open(db_path)

    def close(self) -> None:
        self._con.close()

    def sync(self, files: Iterable[Path], read_keys: KeyReader) -> None:
        """Make the index match `files` (every part file on disk), re-reading only those
        it does not know as they are."""
        known = {row[0]: (row[1], row[2]) for row in self._con.execute(KNOWN_FILES)}
        on_disk = {self._name(p): p for p in files}
        with _atomic(self._con):
            for path in known.keys() - on_disk.keys():
                self._forget(path)
            for name, path in on_disk.items():
                if known.get(name) != _signature(path):
                    self._forget(name)
                    self._record(path, read_keys(path))

    def put(self, path: Path, rows: Iterable[KeyRow]) -> None:
        """Index a file just written (or rewritten): its keys replace any it had."""
        with _atomic(self._con):
            self._forget(self._name(path))
            self._record(path, rows)

    def remove(self, path: Path) -> None:
        with _atomic(self._con):
            self._forget(self._name(path))

    def files_with(self, kind: str, keys: Collection[str]) -> set[Path]:
        """Files holding any of `keys` of `kind`."""
        return {self.folder / row[0] for row in self._lookup(FILES_WITH, kind, keys)}

    def holds(self, kind: str) -> bool:
        """Whether any file holds a key of `kind`."""
        return self._con.execute(ANY_OF_KIND, (kind,)).fetchone() is not None

    def traces_with(self, kind: str, keys: Collection[str]) -> set[str]:
        """Traces in which any of `keys` of `kind` occurs."""
        return {row[0] for row in self._lookup(TRACES_WITH, kind, keys)}

    def _lookup(self, sql: str, kind: str, keys: Collection[str]) -> list[tuple[str]]:
        if not keys:
            return []
        with _atomic(self._con):
            self._con.execute(CLEAR_WANTED)
            self._con.executemany(ADD_WANTED, ((k,) for k in keys))
            return self._con.execute(sql, (kind,)).fetchall()

    def _name(self, path: Path) -> str:
        """A file's name in the index: relative, so the folder may move or be renamed."""
        return path.relative_to(self.folder).as_posix()

    def _forget(self, name: str) -> None:
        self._con.execute(FORGET_FILE_KEYS, (name,))
        self._con.execute(FORGET_FILE, (name,))

    def _record(self, path: Path, rows: Iterable[KeyRow]) -> None:
        row = self._con.execute(RECORD_FILE, (self._name(path), *_signature(path))).fetchone()
        file_id = row[0]
        # In (kind, key) order, the index's order: each of its pages is touched once.
        unique = sorted(set(rows), key=itemgetter(0, 1))  # a trace may be None
        self._con.executemany(RECORD_KEY, ((k, key, t, file_id) for k, key, t in unique))


def _open(db_path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(db_path, isolation_level=None)
    try:
        # Derived data: a crash may lose the last commit, which `sync` rebuilds.
        con.execute("PRAGMA journal_mode = WAL")
        con.execute("PRAGMA synchronous = NORMAL")
        con.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        # Fewer, larger checkpoints: a run's inserts land on random pages, many twice.
        con.execute("PRAGMA wal_autocheckpoint = 10000")
        con.executescript(SCHEMA)
        con.execute(CREATE_WANTED)
    except sqlite3.DatabaseError:
        con.close()
        raise
    return con


def _signature(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


@contextmanager
def _atomic(con: sqlite3.Connection) -> Iterator[None]:
    """All or nothing: one transaction (the connection autocommits each statement else)."""
    con.execute("BEGIN")
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
