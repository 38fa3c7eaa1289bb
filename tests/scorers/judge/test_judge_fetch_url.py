"""`fetch_url` against a local HTTPS server (self-signed certificate made here), with an
injected resolver: blocked address classes, redirects re-checked per hop, pinned connects."""

from __future__ import annotations

import ipaddress
import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from turnscore.scorers.judge.tools.fetch_url import FetchRefused, FetchUrl, blocked_reason

LOOPBACK = ipaddress.ip_address("127.0.0.1")


def make_cert(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for good.test: with `cryptography` if installed, else openssl."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    try:
        import datetime as dt

        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        if shutil.which("openssl") is None:
            pytest.skip("neither cryptography nor openssl is available")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key),
                        "-out", str(cert), "-days", "1", "-subj", "/CN=good.test",
                        "-addext", "subjectAltName=DNS:good.test"],
                       check=True, capture_output=True)
        return cert, key
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "good.test")])
    now = dt.datetime.now(dt.UTC)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                   .public_key(private.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - dt.timedelta(hours=1))
                   .not_valid_after(now + dt.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName("good.test")]),
                                  critical=False)
                   .sign(private, hashes.SHA256()))
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(private.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return cert, key


TRICKLED = {
    # path: (sent at once, then sent a byte at a time, seconds between bytes); each byte
    # arrives well within the socket timeout, so only a total deadline ends the read
    "/drip": (b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n",
              b"x" * 100, 0.03),
    # the status line and headers too, never done: http.client would read them for 20 s
    "/drip-headers": (b"", b"X" * 400, 0.05),
}


class Site:
    def __init__(self, cert: Path, key: Path) -> None:
        self.paths: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.paths.append(self.path)
                host = self.headers.get("Host", "")
                routes = {
                    "/page": (200, "text/html; charset=utf-8",
                              "<html><head><title>T</title><script>var x = 'hidden';</script>"
                              "</head><body><h1>Hello</h1><p>Paris is <b>sunny</b>.</p>"
                              f"<p>host={host}</p></body></html>"),
                    "/plain": (200, "text/plain", "just text"),
                    "/big": (200, "text/plain", "x" * 200_000),
                    "/missing": (404, "text/plain", "nope"),
                }
                if self.path == "/slow":
                    time.sleep(1.5)
                if self.path in TRICKLED:
                    head, rest, gap = TRICKLED[self.path]
                    try:
                        self.wfile.write(head)
                        for byte in rest:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(gap)
                    except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
                        pass
                    return
                if self.path.startswith("/to/"):
                    target = self.path[len("/to/"):]
                    self.send_response(302)
                    self.send_header("Location", target.replace("PORT", str(site.port)))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                status, ctype, body = routes.get(self.path, (200, "text/plain", "slow"))
                data = body.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,),
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Site, ssl.SSLContext]]:
    cert, key = make_cert(tmp_path_factory.mktemp("tls"))
    site = Site(cert, key)
    client_ctx = ssl.create_default_context(cafile=str(cert))
    yield site, client_ctx
    site.close()


DNS = {"good.test": ["127.0.0.1"], "internal.test": ["10.0.0.5"],
       "mixed.test": ["93.184.216.34", "192.168.1.10"]}


class Resolver:
    def __init__(self) -> None:
        self.lookups: list[str] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        return DNS[host]


def fetcher(tls: tuple[Site, ssl.SSLContext], resolver: Resolver, **kw: object) -> FetchUrl:
    return FetchUrl(resolver=resolver, ssl_context=tls[1], allow=frozenset({LOOPBACK}),
                    **kw)  # type: ignore[arg-type]


def test_fetches_html_as_text_over_the_checked_address(tls: tuple[Site, ssl.SSLContext]) -> None:
    site, _ = tls
    resolver = Resolver()
    text = fetcher(tls, resolver)({"url": f"https://good.test:{site.port}/page"})
    # good.test exists only in the injected resolver: reaching it proves the connection went
    # to the address that was checked, with one lookup and the name kept for TLS and Host.
    assert resolver.lookups == ["good.test"]
    assert "Hello" in text and "Paris is sunny." in text and f"host=good.test:{site.port}" in text
    assert "hidden" not in text and "<p>" not in text


def test_caps_the_body_at_50_kb(tls: tuple[Site, ssl.SSLContext]) -> None:
    text = fetcher(tls, Resolver()).fetch(f"https://good.test:{tls[0].port}/big")
    assert text.endswith("[truncated at 50 KB]") and text.count("x") == 50_000


def test_follows_a_redirect_checking_the_new_hop(tls: tuple[Site, ssl.SSLContext]) -> None:
    resolver = Resolver()
    url = f"https://good.test:{tls[0].port}/to/https://good.test:PORT/plain"
    assert fetcher(tls, resolver).fetch(url) == "just text"
    assert resolver.lookups == ["good.test", "good.test"]


def test_refuses_a_redirect_to_a_private_address(tls: tuple[Site, ssl.SSLContext]) -> None:
    site, _ = tls
    before = len(site.paths)
    resolver = Resolver()
    with pytest.raises(FetchRefused, match=r"internal.test resolves to 10.0.0.5, a private"):
        fetcher(tls, resolver).fetch(f"https://good.test:{site.port}/to/https://internal.test/x")
    assert resolver.lookups == ["good.test", "internal.test"]
    assert site.paths[before:] == ["/to/https://internal.test/x"]


@pytest.mark.parametrize(("target", "why"), [
    ("https://127.0.0.2:PORT/plain", "loopback"),
    ("http://good.test:PORT/plain", "only https"),
    ("https://169.254.169.254/latest/meta-data", "link-local"),
])
def test_refuses_redirects_to_other_blocked_targets(tls: tuple[Site, ssl.SSLContext],
                                                    target: str, why: str) -> None:
    with pytest.raises(FetchRefused, match=why):
        fetcher(tls, Resolver()).fetch(f"https://good.test:{tls[0].port}/to/{target}")


def test_redirect_loops_end(tls: tuple[Site, ssl.SSLContext]) -> None:
    url = f"https://good.test:{tls[0].port}/" + "to/https://good.test:PORT/" * 7 + "plain"
    with pytest.raises(FetchRefused, match="more than 5 redirects"):
        fetcher(tls, Resolver()).fetch(url)


def test_http_errors_and_timeouts_raise(tls: tuple[Site, ssl.SSLContext]) -> None:
    with pytest.raises(FetchRefused, match="HTTP 404"):
        fetcher(tls, Resolver()).fetch(f"https://good.test:{tls[0].port}/missing")
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        fetcher(tls, Resolver(), timeout_s=0.3).fetch(f"https://good.test:{tls[0].port}/slow")
    assert time.monotonic() - started < 1.2


@pytest.mark.parametrize("path", sorted(TRICKLED))
def test_a_server_sending_a_byte_at_a_time_cannot_outlast_the_deadline(
        tls: tuple[Site, ssl.SSLContext], path: str) -> None:
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"took over 0\.5 s"):
        fetcher(tls, Resolver(), timeout_s=0.5).fetch(f"https://good.test:{tls[0].port}{path}")
    assert time.monotonic() - started < 1.5  # trickled to the end would take 3 s and 20 s


def test_self_signed_certificates_are_not_trusted_by_default(
        tls: tuple[Site, ssl.SSLContext]) -> None:
    strict = FetchUrl(resolver=Resolver(), allow=frozenset({LOOPBACK}))
    with pytest.raises(ssl.SSLCertVerificationError):
        strict.fetch(f"https://good.test:{tls[0].port}/plain")


@pytest.mark.parametrize(("address", "reason"), [
    ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("192.168.0.1", "private"),
    ("fc00::1", "private"), ("::ffff:10.0.0.1", "private"),
    ("fec0::1", "site-local"), ("feff:ffff::1", "site-local"),
    ("127.0.0.1", "loopback"), ("::1", "loopback"),
    ("169.254.169.254", "link-local"), ("fe80::1", "link-local"),
    ("224.0.0.1", "multicast"), ("ff02::1", "multicast"),
    ("240.0.0.1", "reserved"), ("0.0.0.0", "unspecified"), ("::", "unspecified"),
    ("100.64.0.1", "not globally routable"),
    # IPv6 forms that carry an IPv4 address, which a relay would deliver to.
    ("2002:7f00:1::1", "6to4 of a loopback"), ("2002:a00:1::", "6to4 of a private"),
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo of a loopback"),
])
def test_each_blocked_address_class_is_refused(address: str, reason: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) == reason
    via_dns = FetchUrl(resolver=lambda host, port: [address])
    with pytest.raises(FetchRefused, match=f"a {reason} address"):
        via_dns.fetch("https://somewhere.test/")
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(FetchRefused, match=f"a {reason} address"):
        FetchUrl(resolver=lambda h, p: pytest.fail("literal addresses need no lookup")).fetch(
            f"https://{host}/")


def test_a_host_with_any_blocked_address_is_refused() -> None:
    with pytest.raises(FetchRefused, match=r"192\.168\.1\.10, a private"):
        FetchUrl(resolver=Resolver()).fetch("https://mixed.test/")


def test_public_addresses_pass_the_check() -> None:
    assert blocked_reason(ipaddress.ip_address("93.184.216.34")) is None
    assert blocked_reason(ipaddress.ip_address("2606:4700::1111")) is None


@pytest.mark.parametrize("args", [{}, {"url": 5}, {"url": "ftp://x.test/"}, {"url": "https:///"}])
def test_bad_arguments_are_refused(args: dict[str, object]) -> None:
    with pytest.raises(FetchRefused):
        FetchUrl(resolver=Resolver())(args)
