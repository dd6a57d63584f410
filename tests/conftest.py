"""Shared fixtures: small compiled suites (builders in tests/support.py), an isolated response cache, and the
score of the golden counts table made once per test process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spec_audits.dispatch import registry
from tests.plugins import TEST_DISTRIBUTIONS, pinned_entry_points
from tests.support import FIXTURES, forced_choice_rows, write_suite


@pytest.fixture
def make_suite(tmp_path: Path) -> Callable[..., Path]:
    """make_suite(n=20, samples=2, mode="sample", name="suite", **row_fields) -> suite folder."""

    def make(n: int = 20, samples: int = 2, mode: str = "sample", name: str = "suite", **extra: Any) -> Path:
        return write_suite(tmp_path / name, forced_choice_rows(n, samples, **extra), mode)

    return make


@pytest.fixture(scope="session")
def golden_scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`spec score --counts tests/fixtures/score/golden_counts.csv`, once per test process (seconds of fits,
    bootstrap and plots): session-scoped because pytest-xdist's workers tear a module's fixture down each time
    they move on to another module. Read it, or copy it before writing into it."""
    from click.testing import CliRunner

    from spec_audits.cli import main

    out = tmp_path_factory.mktemp("golden") / "scored"
    result = CliRunner().invoke(main, ["score", "--counts", str(FIXTURES / "score" / "golden_counts.csv"), "-o",
                                       str(out)])
    assert result.exit_code == 0 and result.exception is None, result.output
    return out


@pytest.fixture(autouse=True)
def response_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own response cache, so that no test answers from another's calls."""
    path = tmp_path / "cache" / "responses.sqlite"
    monkeypatch.setenv("SPEC_RESPONSE_CACHE", str(path))
    return path


@pytest.fixture(autouse=True)
def pinned_families(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test sees the built-in families and those it installs itself (tests/plugins.py), never a
    plug-in installed on this machine: a core message that lists the families stays the same."""
    monkeypatch.setattr(registry, "entry_points", pinned_entry_points)
    registry.installed.cache_clear()
    yield
    for name in registry.installed():  # the families the test's distributions gave, forgotten with them
        registry.unregister(name)
    TEST_DISTRIBUTIONS.clear()
    registry.installed.cache_clear()
