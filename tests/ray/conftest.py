"""Fixtures of the Ray tests: a moto S3 server and a two-node Ray cluster, real processes."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from tests.ray.cluster import Cluster, ray_cluster
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


@pytest.fixture(scope="session")
def cluster(s3_endpoint: str) -> Iterator[Cluster]:
    """A head and a second node, started as separate processes with `ray start`, after
    the S3 server: the nodes' workers take its endpoint and credentials from their
    environment, as a real cluster's nodes do."""
    with ray_cluster(workers=1) as running:
        yield running
