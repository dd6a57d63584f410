"""A started loopback stub (chat, files and batches endpoints) for the batch-mode tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.stub_server import StubConfig, StubServer


@pytest.fixture
def stub(request: pytest.FixtureRequest) -> Iterator[StubServer]:
    """Parametrise with indirect=True to pass a StubConfig."""
    server = StubServer(getattr(request, "param", None) or StubConfig(record=True))
    server.start()
    yield server
    server.stop()
