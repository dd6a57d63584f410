"""Tokens and estimated cost per model in run.json and at the end of `spec run` (issue 36: only --dry-run said
what a run would cost, and nothing what it did)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.reader import read_results
from tests.stub_server import StubServer

MODEL = "openai/gpt-4o-mini"  # priced in litellm's cost map; the stub answers in its place


def _run(suite: Path, out: Path, api_base: str) -> str:
    result = CliRunner().invoke(main, ["run", str(suite), "--model", MODEL, "--api-base", api_base, "--out", str(out),
                                       "--no-progress"])
    assert result.exception is None and result.exit_code == 0, result.output
    return result.output


def test_run_json_and_the_console_give_tokens_and_the_price_of_the_fresh_calls(make_suite: Callable[..., Path],
                                                                                tmp_path: Path) -> None:
    suite = make_suite(n=6, samples=2)
    server = StubServer()
    api_base = server.start()
    try:
        first = _run(suite, tmp_path / "a", api_base)
        again = _run(suite, tmp_path / "b", api_base)  # every call from the response cache
    finally:
        server.stop()
    import litellm  # after the run: the runner makes litellm read its local cost map, never fetch one

    rows = read_results(tmp_path / "a" / "results.jsonl")
    prompt = sum((r.usage or {})["prompt_tokens"] for r in rows)
    completion = sum((r.usage or {})["completion_tokens"] for r in rows)
    prices = litellm.model_cost[MODEL.split("/")[1]]
    price = prompt * prices["input_cost_per_token"] + completion * prices["output_cost_per_token"]
    usage = json.loads((tmp_path / "a" / "run.json").read_text())["usage"]
    assert usage == {"prompt_tokens": prompt, "completion_tokens": completion, "cost_usd": round(price, 6)}
    assert prompt > 0 and price > 0
    assert first.splitlines()[-1] == (f"  tokens: {prompt:,} prompt + {completion:,} completion; estimated cost "
                                      f"${price:,.4f} (calls answered from the response cache cost nothing)")
    cached = json.loads((tmp_path / "b" / "run.json").read_text())["usage"]
    assert cached == {"prompt_tokens": prompt, "completion_tokens": completion, "cost_usd": 0.0}
    assert "estimated cost $0.0000" in again


def test_a_run_of_the_embedded_default_says_what_it_is(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    from spec_audits.runner.execute import EMBEDDED_NOTE

    result = CliRunner().invoke(main, ["run", str(make_suite(n=2, samples=1)), "--out", str(tmp_path / "r"),
                                       "--no-progress"])
    assert result.exception is None and result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == EMBEDDED_NOTE
    assert EMBEDDED_NOTE.startswith("model: local/gemma-3-270m, the embedded offline base model")
    assert json.loads((tmp_path / "r" / "run.json").read_text())["usage"]["cost_usd"] == 0.0
