"""Fixture servers for the fetcher's integration tests (all on 127.0.0.x, port 0)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.core.http import FetchConfig
from tests.fixtures.sites import FixtureServer, TlsFiles, hostile_router, make_tls_files

LOOPBACK = ("127.0.0.0/8",)


@pytest.fixture(scope="module")
def hostile() -> Iterator[FixtureServer]:
    with FixtureServer(hostile_router(), name="hostile") as server:
        yield server


@pytest.fixture()
def server(hostile: FixtureServer) -> FixtureServer:
    hostile.clear_log()
    return hostile


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls_files(Path(tmp_path_factory.mktemp("tls")), hostnames=("localhost",
                          "www.fixture.test"), ips=("127.0.0.1",))


def loopback_config(**overrides: object) -> FetchConfig:
    """A config for loopback fixtures with short bounds so hostile cases end quickly."""
    values: dict[str, object] = {"allowed_networks": LOOPBACK, "connect_timeout": 2.0,
                                 "read_timeout": 1.5, "page_deadline": 2.0, "concurrency": 16}
    values.update(overrides)
    return FetchConfig(**values)  # type: ignore[arg-type]
