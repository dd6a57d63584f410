"""Families installed by tests as another distribution would install them, and the pin that keeps every
other test to the built-in families: core tests read the families spec ships, never whatever entry points
the machine running them happens to have (tests/conftest.py applies the pin to every test)."""

from __future__ import annotations

from importlib.metadata import EntryPoint, EntryPoints, entry_points
from pathlib import Path

from click.testing import CliRunner, Result

from spec_audits.cli import main
from spec_audits.dispatch import registry
from tests.stub_server import StubConfig, StubServer

TEST_DISTRIBUTIONS: set[str] = set()  # the distributions install() wrote: the only ones tests see


def install(site: Path, dist: str, points: dict[str, str], modules: dict[str, str]) -> None:
    """What pip writes into site-packages for a distribution: its modules, and a .dist-info folder whose
    entry_points.txt declares families in the group spec_audits.families."""
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8")
    lines = "".join(f"{name} = {value}\n" for name, value in points.items())
    (info / "entry_points.txt").write_text(f"[{registry.ENTRY_POINTS}]\n{lines}", encoding="utf-8")
    for module, code in modules.items():
        (site / f"{module}.py").write_text(code, encoding="utf-8")
    TEST_DISTRIBUTIONS.add(dist)
    registry.installed.cache_clear()


def pinned_entry_points(group: str) -> EntryPoints:
    """The group's entry points of the distributions tests installed, and of no other."""
    return EntryPoints(point for point in entry_points(group=group) if _by_test(point))


def _by_test(point: EntryPoint) -> bool:
    return point.dist is not None and point.dist.name in TEST_DISTRIBUTIONS


def invoke(*args: str) -> Result:
    """`spec ARGS` in this process, so the families installed above are the ones it sees."""
    return CliRunner().invoke(main, list(args))


def run_on_stub(suite: Path, run_dir: Path, config: StubConfig | None = None) -> Result:
    """`spec run` of `suite` against a loopback stub answering as `config` says, into `run_dir`."""
    server = StubServer(config or StubConfig())
    api_base = server.start()
    try:
        return invoke("run", str(suite), "--model", "openai/stub", "--api-base", api_base, "--out", str(run_dir),
                    "--no-progress")
    finally:
        server.stop()
