from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from tests.ray.s3server import make_bucket, s3_server

_buckets = itertools.count()


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    with s3_server() as endpoint:
        yield endpoint


@pytest.fixture
def bucket(s3_endpoint: str) -> str:
    """A new, empty bucket on the moto server; its name."""
    name = f"turnscore-test-{next(_buckets)}"
    make_bucket(s3_endpoint, name)
    return name
