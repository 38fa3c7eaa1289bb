"""`fetch_url`: lets a judge read a public web page (for example, to check a cited source).

Safety, because the URL comes from agent content the judge has read:
- HTTPS only; at most 5 redirects, and every hop is checked again from scratch.
- The host is resolved once and every address is checked; private, loopback, link-local,
  multicast, reserved, unspecified and other non-global addresses are refused (IPv6
  addresses that embed an IPv4 one, mapped, 6to4 or Teredo, are judged by that address).
  A host with any refused address is refused.
- The connection goes to the address that was checked, with the host name used only for SNI,
  certificate verification and the Host header, so a second DNS answer cannot swap it.
- One 10 s deadline for the whole fetch (connect, TLS, headers, body, every redirect): a
  watchdog shuts the socket when it passes, so a server trickling its headers cannot hold
  the judge either. 50 KB read cap, HTML as text.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

from turnscore.scorers.judge.tools import JudgeTool

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]

TIMEOUT_S = 10.0
MAX_BYTES = 50_000
MAX_REDIRECTS = 5
_REDIRECTS = {301, 302, 303, 307, 308}


class FetchRefused(Exception):
    """The URL or an address it resolves to is not allowed."""


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def blocked_reason(ip: IPAddress) -> str | None:
    """Why `ip` may not be fetched from, or None when it is a public address."""
    if isinstance(ip, ipaddress.IPv6Address):
        # Addresses that carry an IPv4 address are judged by it: mapped, 6to4 and Teredo
        # (the client end) can each lead to 127.0.0.1 or 10/8 through a relay.
        # A public embedded address does not clear the IPv6 one: its own checks still apply.
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip.sixtofour is not None and (inner := blocked_reason(ip.sixtofour)):
            return f"6to4 of a {inner}"
        elif ip.teredo is not None and (inner := blocked_reason(ip.teredo[1])):
            return f"Teredo of a {inner}"
    # Order matters: 127/8 and 169.254/16 are also `is_private`; name the specific class.
    checks = (("is_unspecified", "unspecified"), ("is_loopback", "loopback"),
              ("is_link_local", "link-local"), ("is_site_local", "site-local"),
              ("is_multicast", "multicast"),
              ("is_reserved", "reserved"), ("is_private", "private"))
    for attr, name in checks:
        # `is_site_local` (fec0::/10, deprecated but still routed inside some networks) is
        # IPv6 only, and not in `is_private`.
        if getattr(ip, attr, False):
            return name
    if not ip.is_global:
        return "not globally routable"
    return None


class FetchUrl:
    """The tool's behaviour; the resolver, TLS context and allow-list are injectable for tests."""

    def __init__(self, *, resolver: Resolver = system_resolver,
                 ssl_context: ssl.SSLContext | None = None,
                 allow: frozenset[IPAddress] = frozenset(),
                 timeout_s: float = TIMEOUT_S, max_bytes: int = MAX_BYTES) -> None:
        self.resolver = resolver
        self.ssl_context = ssl_context or ssl.create_default_context()
        self.allow = allow
        """Addresses exempt from the block list (tests serve from 127.0.0.1)."""
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes

    def __call__(self, arguments: Mapping[str, object]) -> str:
        url = arguments.get("url")
        if not isinstance(url, str) or not url:
            raise FetchRefused("argument 'url' (a string) is required")
        return self.fetch(url)

    def fetch(self, url: str) -> str:
        deadline = time.monotonic() + self.timeout_s
        for _ in range(MAX_REDIRECTS + 1):
            parts = urlsplit(url)
            if parts.scheme != "https":
                raise FetchRefused(f"only https URLs are fetched, not {parts.scheme or 'none'!r}")
            host = parts.hostname
            if not host:
                raise FetchRefused(f"no host in {url!r}")
            port = parts.port or 443
            address = self.checked_address(host, port)
            path = parts.path or "/"
            if parts.query:
                path += "?" + parts.query
            status, headers, body, truncated = self._get(host, port, address, path, deadline)
            if status in _REDIRECTS:
                location = headers.get("location")
                if not location:
                    raise FetchRefused(f"HTTP {status} redirect without a Location")
                url = urljoin(url, location)
                continue
            if status >= 400:
                raise FetchRefused(f"HTTP {status} from {host}")
            return _to_text(body, headers.get("content-type", ""), truncated, self.max_bytes)
        raise FetchRefused(f"more than {MAX_REDIRECTS} redirects")

    def checked_address(self, host: str, port: int) -> str:
        """Resolve `host` once; refuse if any address is blocked; return the one to connect to."""
        try:
            literal: IPAddress | None = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        raw = [str(literal)] if literal is not None else list(self.resolver(host, port))
        if not raw:
            raise FetchRefused(f"{host} did not resolve")
        for text in raw:
            ip = ipaddress.ip_address(text.split("%", 1)[0])
            reason = None if ip in self.allow else blocked_reason(ip)
            if reason:
                raise FetchRefused(f"{host} resolves to {ip}, a {reason} address")
        return raw[0]

    def _get(self, host: str, port: int, address: str, path: str, deadline: float
             ) -> tuple[int, dict[str, str], bytes, bool]:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"fetching from {host} took over {self.timeout_s:g} s")
        conn = _PinnedHTTPS(host, port, address, self.ssl_context, min(self.timeout_s, left))
        # Socket timeouts bound each receive, not their sum: headers sent a byte at a time
        # would go on for ever. The watchdog ends the connection at the deadline instead.
        watchdog = threading.Timer(left, conn.abort)
        watchdog.daemon = True
        watchdog.start()
        try:
            result = self._exchange(conn, host, path, deadline)
        except (OSError, http.client.HTTPException) as exc:
            # Each receive is capped at the time left, so its socket timeout can fire just
            # before the watchdog does: both are the deadline passing.
            if conn.aborted or isinstance(exc, TimeoutError):
                raise TimeoutError(f"fetching from {host} took over {self.timeout_s:g} s"
                                   ) from None
            raise
        finally:
            watchdog.cancel()
            conn.close()
        if conn.aborted:  # a body cut short by the watchdog is not the page
            raise TimeoutError(f"fetching from {host} took over {self.timeout_s:g} s")
        return result

    def _exchange(self, conn: _PinnedHTTPS, host: str, path: str, deadline: float
                  ) -> tuple[int, dict[str, str], bytes, bool]:
        conn.request("GET", path, headers={"User-Agent": "turnscore-judge/1",
                                           "Accept": "text/html, text/plain, */*"})
        resp = conn.getresponse()
        chunks: list[bytes] = []
        size = 0
        while size <= self.max_bytes:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"fetching from {host} took over {self.timeout_s:g} s")
            # `read1` returns after one receive, and no receive may outlast the deadline:
            # `read(n)` would wait for all n bytes, so a server sending a byte at a time
            # could hold the judge for hours without ever tripping a socket timeout.
            conn.limit(left)
            chunk = resp.read1(min(8192, self.max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        body = b"".join(chunks)
        headers = {k.lower(): v for k, v in resp.getheaders()}
        return resp.status, headers, body[: self.max_bytes], size > self.max_bytes

class _PinnedHTTPS(http.client.HTTPSConnection):
    """HTTPS to `host` (SNI, certificate, Host header) over a socket to the checked address."""

    def __init__(self, host: str, port: int, address: str, context: ssl.SSLContext,
                 timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._address = address
        self._context = context
        self._pinned: ssl.SSLSocket | None = None
        self._raw: socket.socket | None = None
        self._lock = threading.Lock()
        self.aborted = False

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), timeout=self.timeout)
        with self._lock:
            if self.aborted:
                sock.close()
                raise TimeoutError("the deadline passed while connecting")
            self._raw = sock
        self.sock = self._pinned = self._context.wrap_socket(sock, server_hostname=self.host)

    def limit(self, seconds: float) -> None:
        """Cap the next socket operation (the response may have detached `self.sock`)."""
        assert self._pinned is not None
        self._pinned.settimeout(min(seconds, self.timeout or seconds))

    def abort(self) -> None:
        """From the watchdog thread: end the connection, waking any blocked receive."""
        with self._lock:
            self.aborted = True
            sock = self._pinned or self._raw
        if sock is not None:
            # The plain socket call: the TLS layer's own shutdown is not thread-safe.
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _to_text(body: bytes, content_type: str, truncated: bool, cap: int) -> str:
    charset = "utf-8"
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            charset = value.strip('"')
    try:
        text = body.decode(charset, errors="replace")
    except LookupError:
        text = body.decode("utf-8", errors="replace")
    sniffed = text.lstrip()[:15].lower().startswith(("<!doctype", "<html"))
    if "html" in content_type.lower() or sniffed:
        text = html_to_text(text)
    if truncated:
        text += f"\n[truncated at {cap // 1000} KB]"
    return text


class _TextOnly(HTMLParser):
    _SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head"})
    _BLOCK = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6",
                        "section", "article", "table", "ul", "ol", "pre", "blockquote", "title"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self._skipping += 1
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self._skipping:
            self._skipping -= 1
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    parser = _TextOnly()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)


_DEFAULT = FetchUrl()

TOOL = JudgeTool(
    name="fetch_url",
    description="Fetch a public HTTPS web page and return its text (first 50 KB).",
    parameters={"type": "object", "properties": {"url": {"type": "string",
                "description": "An https:// URL."}}, "required": ["url"],
                "additionalProperties": False},
    run=_DEFAULT,
)
