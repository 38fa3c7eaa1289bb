"""The report in a real browser: headless Chromium opens the file offline, runs its scripts
without a console error, draws every chart, keeps hostile agent content as text, and the
screenshot is not blank.

Chromium is driven over the DevTools protocol (a websocket on 127.0.0.1, on a port the
browser picks) so console errors, uncaught exceptions and log entries are all collected.
Skipped only when no Chromium is installed.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import struct
import subprocess
import tempfile
import time
import urllib.request
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.warehouse.test_report import HOSTILE, HOSTILE_AGENT, build_demo_warehouse
from turnscore.warehouse.report import build_report

pytestmark = pytest.mark.browser

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--remote-debugging-port=0")
WIDTH, HEIGHT = 1400, 1800


def find_chromium() -> str | None:
    env = os.environ.get("TURNSCORE_CHROMIUM")
    if env:
        return env
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Page:
    """One page target of a running Chromium, spoken to over CDP."""

    ws: Any
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    events: list[dict[str, Any]] = field(default_factory=list)

    def _recv(self, timeout: float) -> dict[str, Any] | None:
        """The next message, or None when none came within `timeout` seconds."""
        import websocket

        self.ws.settimeout(max(timeout, 0.01))
        try:
            msg = dict(json.loads(self.ws.recv()))
        except websocket.WebSocketTimeoutException:
            return None
        if "method" in msg:
            self.events.append(msg)
        return msg

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        msg_id = next(self.ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        deadline = time.monotonic() + 60
        while (msg := self._recv(deadline - time.monotonic())) is not None:
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method} failed: {msg['error']}")
                return dict(msg.get("result", {}))
        raise TimeoutError(f"no reply to {method} within 60 s")

    def wait_for(self, method: str, timeout: float) -> dict[str, Any]:
        for event in self.events:
            if event["method"] == method:
                return event
        deadline = time.monotonic() + timeout
        while (msg := self._recv(deadline - time.monotonic())) is not None:
            if msg.get("method") == method:
                return msg
        raise TimeoutError(f"no {method} within {timeout} s")

    def drain(self, seconds: float) -> None:
        """Collect events for a while (late console errors, chart resizes)."""
        deadline = time.monotonic() + seconds
        while deadline > time.monotonic() and self._recv(deadline - time.monotonic()):
            pass

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def console_errors(self) -> list[str]:
        errors = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                errors.append(f"exception: {p['exceptionDetails'].get('text')} "
                              f"{p['exceptionDetails'].get('exception', {}).get('description')}")
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") == "error":
                errors.append("console.error: " + " ".join(
                    str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif e["method"] == "Log.entryAdded" and p["entry"].get("level") == "error":
                errors.append(f"log: {p['entry'].get('text')} ({p['entry'].get('url')})")
        return errors


@pytest.fixture(scope="module")
def demo_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_warehouse(tmp_path_factory.mktemp("report-browser"))


@contextmanager
def launch_chromium(binary: str, workdir: Path) -> Iterator[Page]:
    """A fresh headless Chromium (own profile under `workdir`) and its first page."""
    import websocket  # dev dependency: websocket-client

    profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=workdir)
    proc = subprocess.Popen(
        [binary, *FLAGS, f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}",
         "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        port = _devtools_port(Path(profile), proc)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            targets = json.load(resp)
        page_url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        ws = websocket.create_connection(page_url, timeout=30, suppress_origin=True)
        try:
            page = Page(ws)
            for domain in ("Runtime", "Log", "Page", "Network"):
                page.call(f"{domain}.enable")
            page.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT,
                      deviceScaleFactor=1, mobile=False)
            yield page
        finally:
            ws.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def chromium_page(tmp_path: Path) -> Iterator[Page]:
    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium installed (apt-get install chromium, or set TURNSCORE_CHROMIUM)")
    with launch_chromium(binary, tmp_path) as page:
        yield page


def _devtools_port(profile: Path, proc: subprocess.Popen[bytes]) -> int:
    """Chromium writes the port it picked to DevToolsActivePort in its profile."""
    marker = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chromium exited with code {proc.returncode}")
        if marker.is_file():
            first = marker.read_text().splitlines()[:1]
            if first and first[0].isdigit():
                return int(first[0])
        time.sleep(0.05)
    raise TimeoutError("chromium did not open its DevTools port within 30 s")


def open_report(page: Page, path: Path) -> None:
    page.call("Page.navigate", url=path.resolve().as_uri())
    page.wait_for("Page.loadEventFired", timeout=60)
    page.drain(1.0)


def screenshot(page: Page, *, full_page: bool = False, scale: float = 1.0) -> bytes:
    import base64

    params: dict[str, Any] = {"format": "png"}
    if full_page:
        size = page.call("Page.getLayoutMetrics")["cssContentSize"]
        params.update(captureBeyondViewport=True, clip={
            "x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": scale})
    elif scale != 1.0:
        params["clip"] = {"x": 0, "y": 0, "width": WIDTH, "height": HEIGHT, "scale": scale}
    return base64.b64decode(page.call("Page.captureScreenshot", **params)["data"])


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA, non-interlaced PNG (what Chromium writes) to pixel rows."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, bytearray(), b""
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
    bpp = 3 if color == 2 else 4
    raw, stride = zlib.decompress(bytes(idat)), width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        ftype, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line) if bpp == 3 else bytes(
            v for k, v in enumerate(line) if k % 4 != 3))
        prev = line
    return width, height, rows


def colour_stats(data: bytes) -> tuple[int, float]:
    """(distinct colours, share of near-white pixels) of a PNG."""
    width, height, rows = png_pixels(data)
    colours: set[bytes] = set()
    white = 0
    for row in rows:
        for x in range(0, width * 3, 3):
            px = row[x:x + 3]
            colours.add(px)
            white += min(px) >= 245
    return len(colours), white / (width * height)


def test_report_opens_offline_without_errors_and_draws(chromium_page: Page,
                                                        demo_warehouse: Path,
                                                        tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    build_report(demo_warehouse, out=out)
    open_report(chromium_page, out)

    assert chromium_page.console_errors() == []
    fetched = [e["params"]["request"]["url"] for e in chromium_page.events
               if e["method"] == "Network.requestWillBeSent"]
    assert fetched == [out.resolve().as_uri()], "the page must load nothing but itself"
    charts = chromium_page.evaluate("document.querySelectorAll('.js-plotly-plot').length")
    drawn = chromium_page.evaluate(
        "Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".filter(d => d.querySelectorAll('svg.main-svg g.trace').length > 0).length")
    assert charts >= 8 and drawn == charts
    # The hostile request ran no script and shows as the text it is.
    assert chromium_page.evaluate("typeof window.__turnscore_xss") == "undefined"
    text = chromium_page.evaluate("document.getElementById('lowest').innerText")
    assert HOSTILE in text
    # Chart labels too: plotly renders some tags in labels, so they must arrive escaped.
    ticks = chromium_page.evaluate("Array.from(document.querySelectorAll("
                                   "'#chart-usage-agent .ytick text')).map(t => t.textContent)")
    assert HOSTILE_AGENT in ticks

    png = screenshot(chromium_page, scale=0.5)
    distinct, white_share = colour_stats(png)
    assert distinct > 200, f"only {distinct} colours: is the page blank?"
    assert white_share < 0.95


def test_empty_warehouse_report_has_no_errors(chromium_page: Page, tmp_path: Path) -> None:
    from turnscore.warehouse import open_warehouse

    open_warehouse(tmp_path / "wh").close()
    out = tmp_path / "empty.html"
    build_report(tmp_path / "wh", out=out)
    open_report(chromium_page, out)
    assert chromium_page.console_errors() == []
    assert "nothing to report" in chromium_page.evaluate("document.body.innerText")


def save_docs_screenshot(page: Page, report: Path, png: Path) -> None:
    """Used by hand to refresh docs/report.png (see the report section of the README)."""
    open_report(page, report)
    png.write_bytes(screenshot(page, full_page=True, scale=0.6))
