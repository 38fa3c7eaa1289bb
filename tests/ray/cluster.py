"""A real Ray cluster on this machine: a head and worker nodes, each started with `ray start`.

Every port is chosen free here (other clusters may run on the machine) and every node
gets `--num-cpus=1` and a small object store. `ray stop` would stop every Ray process
on the machine, so `Cluster.stop` ends only this cluster's processes: those whose
command line names its temporary folder or its ports, found in /proc.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from tests.ray.s3server import free_port

RAY = str(Path(sys.executable).with_name("ray"))
OBJECT_STORE = 100_000_000
START_ATTEMPTS = 3


@dataclass
class Node:
    node_manager_port: int
    object_manager_port: int

    def raylet_pids(self) -> list[int]:
        return [pid for pid, cmd in _processes()
                if "raylet" in cmd.split("\0", 1)[0]
                and f"--node_manager_port={self.node_manager_port}" in cmd]


@dataclass
class Cluster:
    temp_dir: Path
    port: int
    nodes: list[Node] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def add_node(self, *, head: bool = False) -> Node:
        """Start a node; on a loaded machine `ray start` can time out (Ray waits 30 s for
        a raylet), so a failed start is cleaned up and tried again, twice."""
        for attempt in range(START_ATTEMPTS):
            try:
                return self._start(head)
            except RuntimeError:
                if attempt == START_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    def _start(self, head: bool) -> Node:
        node = Node(free_port(), free_port())
        low = free_port()
        ports = [
            f"--node-manager-port={node.node_manager_port}",
            f"--object-manager-port={node.object_manager_port}",
            f"--min-worker-port={low}", f"--max-worker-port={low + 40}",
            f"--dashboard-agent-listen-port={free_port()}",
            f"--dashboard-agent-grpc-port={free_port()}",
            f"--metrics-export-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}",
        ]
        common = ["--num-cpus=1", f"--object-store-memory={OBJECT_STORE}",
                  "--disable-usage-stats", "--node-ip-address=127.0.0.1", *ports]
        if head:
            args = [RAY, "start", "--head", f"--port={self.port}", "--include-dashboard=false",
                    f"--temp-dir={self.temp_dir}", *common]
        else:
            args = [RAY, "start", f"--address={self.address}", *common]
        env = dict(os.environ, RAY_AUTH_MODE="disabled")
        self.nodes.append(node)  # before it runs: `stop` must find its processes
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=180)
        if done.returncode:
            if head:
                self.stop()
            else:
                self._kill(node)
            self.nodes.remove(node)
            raise RuntimeError(f"ray start failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        return node

    def _kill(self, node: Node) -> None:
        mark = str(node.node_manager_port)
        for pid, cmd in _processes():
            if mark in cmd and "ray" in cmd and pid != os.getpid():
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    def pids(self) -> list[int]:
        """Every process of this cluster (its temp folder or one of its ports in argv)."""
        marks = [str(self.temp_dir), f"{self.port}"] + [
            f"{n.node_manager_port}" for n in self.nodes]
        mine = []
        for pid, cmd in _processes():
            if pid == os.getpid():
                continue
            if str(self.temp_dir) in cmd or (
                    any(m in cmd for m in marks[1:]) and ("ray" in cmd or "raylet" in cmd)):
                mine.append(pid)
        return mine

    def workers_of(self, node: Node) -> list[tuple[int, str]]:
        """Worker processes (`ray::...`) whose parent is `node`'s raylet."""
        raylets = set(node.raylet_pids())
        out = []
        for pid, cmd in _processes():
            if cmd.startswith("ray::") and _parent(pid) in raylets:
                out.append((pid, cmd.split("\0", 1)[0]))
        return out

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = self.pids()
            for pid in pids:
                with suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + 10
            while pids and time.monotonic() < deadline:
                pids = [p for p in pids if Path(f"/proc/{p}").exists() and not _zombie(p)]
                time.sleep(0.2)


def _processes() -> Iterator[tuple[int, str]]:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if cmd:
            yield int(entry.name), cmd


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return -1
    return int(stat.rsplit(")", 1)[1].split()[1])


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@contextmanager
def ray_cluster(workers: int = 1) -> Iterator[Cluster]:
    """A head node and `workers` more, one CPU each; stopped (only it) on exit."""
    # Short: Ray's socket paths under the temp folder must fit in 107 bytes.
    temp = Path(tempfile.mkdtemp(prefix="tsray", dir="/tmp"))
    cluster = Cluster(temp, free_port())
    try:
        cluster.add_node(head=True)
        for _ in range(workers):
            cluster.add_node()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(temp, ignore_errors=True)
