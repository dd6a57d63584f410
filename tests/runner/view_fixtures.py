"""Runs for the transcript viewer's tests: a study of two stub models over a suite with planted markup."""

from __future__ import annotations

from pathlib import Path

from spec_audits.contract.suite_model import SuiteRow
from spec_audits.contract.writer import suite_row
from spec_audits.runner.execute import run_suite
from spec_audits.runner.run_config import RunConfig
from spec_audits.runner.study import record_study
from tests.stub_server import StubConfig, StubServer
from tests.support import forced_choice_rows, write_suite

HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">&amp; </table>'
"""Markup a stranger's suite may hold in a prompt, a level and an answer's meaning."""


def hostile_rows() -> list[SuiteRow]:
    """forced_choice_rows, and one row whose prompt, level and option meaning are HOSTILE."""
    rows = forced_choice_rows(8, 1)
    body = rows[0].model_dump(exclude={"id"}, exclude_none=True)
    body["messages"][1]["content"] = f"Which? {HOSTILE} A: tea B: coffee. Respond with only 'A' or 'B'."
    body["cell"] = {**body["cell"], "influence": HOSTILE}
    body["answers"] = {"A": HOSTILE, "B": "coffee"}
    return sorted([*rows, suite_row(body)], key=lambda r: r.id)


def study(tmp_path: Path) -> Path:
    """A study folder of two models (openai/stub-a and openai/stub-b) over hostile_rows; every fifth
    request gets "I cannot choose." (unparsed)."""
    suite = write_suite(tmp_path / "suite", hostile_rows())
    folder = tmp_path / "study"
    server = StubServer(StubConfig(invalid_hash_rate=0.2))
    api_base = server.start()
    try:
        for name in ("stub-a", "stub-b"):
            run_suite(RunConfig(suite_dir=suite, out=folder / name, model=f"openai/{name}", api_base=api_base,
                                use_cache=False, progress=False, concurrency=1))
    finally:
        server.stop()
    record_study(folder, suite, ["stub-a", "stub-b"])
    return folder
