"""A real S3 API on 127.0.0.1: moto in server mode, as a separate process.

Used by the storage and Ray tests and by `bench/scale.py`. `S3Server` starts
`python -m moto.server` on a free port, waits until it answers, and points the
environment of this process (and of anything it starts, Ray nodes included) at it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow.fs as pafs

CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    # Never ask an instance metadata service for credentials: there is none here.
    "AWS_EC2_METADATA_DISABLED": "true",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def s3_server() -> Iterator[str]:
    """Run a moto S3 server; yields its endpoint URL, with the AWS_* environment set."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    saved = {k: os.environ.get(k) for k in (*CREDENTIALS, "AWS_ENDPOINT_URL")}
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(endpoint + "/", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto server did not start") from None
                time.sleep(0.2)
        os.environ.update(CREDENTIALS, AWS_ENDPOINT_URL=endpoint)
        yield endpoint
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def make_bucket(endpoint: str, name: str) -> None:
    fs = pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", region="us-east-1",
                           access_key="testing", secret_key="testing",
                           allow_bucket_creation=True)
    fs.create_dir(name)
