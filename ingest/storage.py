"""Where input and output live: local folders and object storage, through `pyarrow.fs`.

A location is a URI (`s3://bucket/prefix`, `gs://bucket/prefix`, `file:///abs/path`) or
a plain path. Credentials, region and endpoint come from the usual environment of those
libraries (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_DEFAULT_REGION`, ...;
`GOOGLE_APPLICATION_CREDENTIALS` for gs://); `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`
points s3:// at an S3-compatible server (MinIO, moto, Ceph).

**Manifest commits.** Object stores cannot rename, so a dataset written by a run is made
visible by one last small object, not by moving files: a run writes its Parquet under
its own prefix (`<root>/<dataset>/run=<run id>/...`), then writes
`<root>/_manifests/<run id>.json` naming every file it wrote. Readers (`committed`) list
the manifests and read only the files they name, so a run killed before its manifest
left files nobody reads, and a later run (holding the warehouse writer lock, so no run
is writing) removes them (`sweep_uncommitted`). One object PUT is atomic on S3 and GCS;
on a local disk the manifest is written under a temporary name and renamed.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pyarrow.fs as pafs

from turnscore.errors import TurnscoreError

__all__ = [
    "MANIFEST_DIR",
    "Location",
    "Manifest",
    "StorageError",
    "StoredFile",
    "commit",
    "committed",
    "exists",
    "list_files",
    "location",
    "sweep_uncommitted",
]

MANIFEST_DIR = "_manifests"
RUN_PREFIX = "run="
_TEMP = ".tmp-"
_REMOTE_SCHEMES = ("s3://", "gs://", "gcs://")


class StorageError(TurnscoreError):
    """A location that cannot be resolved, listed, read or written."""


@dataclass(frozen=True, slots=True)
class Location:
    """A folder or file on one filesystem: `path` is the filesystem's own (no scheme)."""

    fs: pafs.FileSystem
    path: str
    uri: str
    """How the user named it (and how records' `source` names files read from it)."""

    def child(self, *parts: str) -> Location:
        joined = "/".join(p.strip("/") for p in parts if p)
        return Location(self.fs, posixpath.join(self.path, joined),
                        _join_uri(self.uri, joined))

    @property
    def local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    def read_bytes(self) -> bytes:
        try:
            with self.fs.open_input_stream(self.path) as fh:
                return bytes(fh.read())
        except OSError as exc:
            raise StorageError(f"cannot read {self.uri}: {exc}") from exc

    def write_bytes(self, data: bytes) -> None:
        """Write the whole object; on a local disk under a temporary name, then renamed,
        so a reader never sees half of it (an object store's PUT is atomic already)."""
        try:
            parent = posixpath.dirname(self.path)
            if self.local:
                self.fs.create_dir(parent, recursive=True)
                temp = posixpath.join(parent, f"{_TEMP}{posixpath.basename(self.path)}")
                with self.fs.open_output_stream(temp) as fh:
                    fh.write(data)
                self.fs.move(temp, self.path)
            else:
                with self.fs.open_output_stream(self.path) as fh:
                    fh.write(data)
        except OSError as exc:
            raise StorageError(f"cannot write {self.uri}: {exc}") from exc

    def upload(self, local_file: Path) -> None:
        """Copy a local file to this location."""
        self.write_bytes(local_file.read_bytes())

    def download(self, local_file: Path) -> Path:
        local_file.parent.mkdir(parents=True, exist_ok=True)
        local_file.write_bytes(self.read_bytes())
        return local_file


def _join_uri(uri: str, rel: str) -> str:
    if not rel:
        return uri
    return f"{uri.rstrip('/')}/{rel}"


def location(text: str | Path) -> Location:
    """Resolve a URI or plain path; raises `StorageError` for an unknown scheme or a
    filesystem that cannot be set up (no credentials found, say)."""
    raw = str(text)
    if raw.startswith(_REMOTE_SCHEMES):
        scheme, _, rest = raw.partition("://")
        bucket_path = rest.strip("/")
        if not bucket_path:
            raise StorageError(f"{raw}: no bucket named")
        return Location(_remote_fs(scheme), bucket_path, raw.rstrip("/"))
    if "://" in raw and not raw.startswith("file://"):
        raise StorageError(
            f"{raw}: unknown storage scheme; use s3://, gs://, file:// or a plain path")
    path = raw.removeprefix("file://") if raw.startswith("file://") else raw
    absolute = os.path.abspath(path)
    return Location(pafs.LocalFileSystem(), absolute, raw)


def _remote_fs(scheme: str) -> pafs.FileSystem:
    try:
        if scheme == "s3":
            endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get(
                "AWS_ENDPOINT_URL")
            options: dict[str, Any] = {}
            if endpoint:
                options["endpoint_override"] = endpoint
                options["scheme"] = "https" if endpoint.startswith("https") else "http"
            region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
            if region:
                options["region"] = region
            return pafs.S3FileSystem(**options)
        return pafs.GcsFileSystem()
    except (OSError, ValueError) as exc:
        raise StorageError(f"cannot open {scheme}:// storage: {exc}") from exc


def exists(loc: Location) -> bool:
    """Whether `loc` names a file or a folder (a prefix holding objects)."""
    try:
        return loc.fs.get_file_info(loc.path).type != pafs.FileType.NotFound
    except OSError as exc:
        raise StorageError(f"cannot look up {loc.uri}: {exc}") from exc


@dataclass(frozen=True, slots=True)
class StoredFile:
    location: Location
    size: int


def list_files(root: Location, keep: Callable[[str], bool] | None = None) -> list[StoredFile]:
    """Every file under `root` (recursively; `root` may be one file), hidden names and
    folders (`.`) skipped, sorted by path as `PurePath`s sort; only those whose base name
    `keep` accepts, if given (a file named as `root` itself is always kept, as a path given
    explicitly is).
    Raises `StorageError` when `root` does not exist."""
    try:
        info = root.fs.get_file_info(root.path)
        if info.type == pafs.FileType.File:
            return [StoredFile(root, info.size or 0)]
        if info.type != pafs.FileType.Directory:
            raise StorageError(f"no such file or folder: {root.uri}")
        found = root.fs.get_file_info(pafs.FileSelector(root.path, recursive=True))
    except OSError as exc:
        raise StorageError(f"cannot list {root.uri}: {exc}") from exc
    out = []
    for entry in found:
        if entry.type != pafs.FileType.File:
            continue
        rel = posixpath.relpath(entry.path, root.path)
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        if keep is not None and not keep(entry.base_name):
            continue
        out.append(StoredFile(root.child(rel), entry.size or 0))
    # Folder by folder, as local ingest orders paths (`PurePath`s compare by parts): by
    # the whole string, `a-b/x` would come before `a/x`, and the two engines would keep
    # different copies of one content (`inputs.plan`: the first is read).
    return sorted(out, key=lambda f: f.location.path.split("/"))


@dataclass(frozen=True, slots=True)
class Manifest:
    """One committed run: the files it wrote per dataset (paths relative to the root)."""

    run_id: str
    files: Mapping[str, tuple[str, ...]]
    """Dataset name (`spans`, `turns`, `scores`) -> relative paths."""
    meta: Mapping[str, Any] = field(default_factory=dict)
    """What the run wants a reader to know: its inputs, counts, errors (JSON-able)."""

    def to_json(self) -> bytes:
        return orjson.dumps({"run_id": self.run_id,
                             "files": {k: list(v) for k, v in self.files.items()},
                             "meta": dict(self.meta)}, option=orjson.OPT_SORT_KEYS)

    @staticmethod
    def from_json(data: bytes, where: str) -> Manifest:
        try:
            raw = orjson.loads(data)
            return Manifest(str(raw["run_id"]),
                            {k: tuple(v) for k, v in raw["files"].items()},
                            raw.get("meta") or {})
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise StorageError(f"{where}: not a turnscore manifest ({exc})") from exc


def run_prefix(dataset: str, run_id: str) -> str:
    """Where a run writes a dataset's files, relative to the root."""
    return f"{dataset}/{RUN_PREFIX}{run_id}"


def commit(root: Location, manifest: Manifest) -> Location:
    """Make a run's files visible: write its manifest (the last write of the run)."""
    for dataset, paths in manifest.files.items():
        prefix = run_prefix(dataset, manifest.run_id) + "/"
        stray = [p for p in paths if not p.startswith(prefix)]
        if stray:  # the sweep would remove them: a manifest names only its run's files
            raise StorageError(f"run {manifest.run_id}: {stray[0]} is not under {prefix}")
    target = root.child(MANIFEST_DIR, f"{manifest.run_id}.json")
    target.write_bytes(manifest.to_json())
    return target


def committed(root: Location) -> list[Manifest]:
    """Every committed run under `root`, oldest run id first (run ids sort by time)."""
    folder = root.child(MANIFEST_DIR)
    try:
        info = root.fs.get_file_info(folder.path)
        if info.type != pafs.FileType.Directory:
            return []
        entries = root.fs.get_file_info(pafs.FileSelector(folder.path))
    except OSError as exc:
        raise StorageError(f"cannot list {folder.uri}: {exc}") from exc
    names = sorted(e.base_name for e in entries
                   if e.type == pafs.FileType.File and e.base_name.endswith(".json")
                   and not e.base_name.startswith(_TEMP))
    return [Manifest.from_json(folder.child(n).read_bytes(), folder.child(n).uri)
            for n in names]


def committed_files(root: Location, dataset: str,
                    manifests: Iterable[Manifest] | None = None) -> Iterator[Location]:
    """The files of `dataset` that committed runs wrote."""
    for manifest in committed(root) if manifests is None else manifests:
        for rel in manifest.files.get(dataset, ()):
            yield root.child(rel)


def sweep_uncommitted(root: Location, datasets: Sequence[str]) -> list[str]:
    """Remove the run prefixes of `datasets` that no manifest names (runs that died before
    committing); returns the prefixes removed. Call only while no run is writing (under
    the warehouse writer lock)."""
    done = {m.run_id for m in committed(root)}
    removed = []
    for dataset in datasets:
        folder = root.child(dataset)
        try:
            if root.fs.get_file_info(folder.path).type != pafs.FileType.Directory:
                continue
            entries = root.fs.get_file_info(pafs.FileSelector(folder.path))
            for entry in entries:
                name = entry.base_name
                if name.startswith(RUN_PREFIX) and name[len(RUN_PREFIX):] not in done:
                    root.fs.delete_dir(entry.path)
                    removed.append(f"{dataset}/{name}")
        except OSError as exc:
            raise StorageError(f"cannot sweep {folder.uri}: {exc}") from exc
    return removed
