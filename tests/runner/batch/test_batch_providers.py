"""Which models batch mode takes, logprob mode in batches, the dry run's batch count and batch price, and the
split of a round into files by the provider's limits."""

from __future__ import annotations

import asyncio
from pathlib import Path

import litellm
import pytest
from click.testing import CliRunner

from spec_audits.runner.batch.providers import batch_provider, request_body
from spec_audits.runner.batch.requests import request_line, split_lines
from spec_audits.runner.commands.run_cli import run as run_command
from spec_audits.runner.run_config import RunError
from spec_audits.runner.services.provider_errors import FatalError
from tests.runner.batch.support import run
from tests.stub_server import StubConfig, StubServer
from tests.support import forced_choice_rows, write_suite

SUPPORTED = "openai/, hosted_vllm/, litellm_proxy/"


@pytest.mark.parametrize(("model", "why"), [
    ("anthropic/claude-3-5-haiku-20241022",
     "goes to litellm's anthropic provider (litellm 1.110.2 retrieves Anthropic message batches but cannot "
     "create one)"),
    ("azure/my-deployment", "goes to litellm's azure provider (Azure batches need a deployment and API version"),
    ("groq/llama-3.1-8b-instant", "goes to litellm's groq provider (litellm has no OpenAI-style batch API for it)"),
    ("local/gemma-3-270m", "runs in this process and has no batch API"),
])
def test_a_model_without_batches_is_refused_naming_the_supported_providers(
    tmp_path: Path, model: str, why: str
) -> None:
    suite = write_suite(tmp_path / "suite", forced_choice_rows(2, 1))
    result = CliRunner().invoke(run_command, [str(suite), "--model", model, "--batch", "--out", str(tmp_path / "r")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output.startswith(f"Error: --batch: {model} {why}")
    assert SUPPORTED in result.output
    assert not (tmp_path / "r" / "batches").exists()


@pytest.mark.parametrize(("model", "provider"), [("openai/gpt-4o-mini", "openai"), ("gpt-4o", "openai"),
                                                 ("hosted_vllm/Qwen/Qwen3-8B", "hosted_vllm"),
                                                 ("litellm_proxy/my-model", "litellm_proxy")])
def test_batch_providers(model: str, provider: str) -> None:
    assert batch_provider(model).name == provider


def test_a_line_carries_litellm_s_own_mapping_of_the_settings() -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "A or B?"}]
    body = request_body("openai/o3-mini", messages, {"max_tokens": 2, "seed": 3, "top_k": 5})
    assert body["max_completion_tokens"] == 2 and "max_tokens" not in body and "stream" not in body
    assert body["model"] == "o3-mini" and body["seed"] == 3
    line = request_line("k" * 64, body)
    assert line.endswith(b"\n") and b'"url":"/v1/chat/completions"' in line and line.count(b"\n") == 1


def test_files_are_cut_by_requests_and_by_bytes() -> None:
    lines = [(f"{i:064x}", b"x" * (10 + i) + b"\n") for i in range(10)]
    assert [len(chunk) for chunk in split_lines(lines, 4, 10**6)] == [4, 4, 2]
    by_bytes = split_lines(lines, 100, 40)
    assert [len(chunk) for chunk in by_bytes] == [3, 2, 2, 2, 1]
    assert all(sum(len(line) for _, line in chunk) <= 40 for chunk in by_bytes)
    assert [key for chunk in by_bytes for key, _ in chunk] == [key for key, _ in lines]
    assert split_lines([("k", b"y" * 100)], 100, 40) == [[("k", b"y" * 100)]]  # alone, the provider says why


@pytest.mark.parametrize("stub", [StubConfig(logprobs=False)], indirect=True)
def test_logprob_mode_without_logprobs_in_the_batch_output_is_a_clear_error(tmp_path: Path, stub: StubServer) -> None:
    suite = write_suite(tmp_path / "suite", forced_choice_rows(4, 1), mode="logprob")
    with pytest.raises(FatalError, match=r"^openai/stub returned no logprobs in its batch output: run the suite "
                                         r"with --mode sample, or without --batch$"):
        run(suite, tmp_path / "run", stub)


def test_logprob_mode_in_batches(tmp_path: Path, stub: StubServer) -> None:
    suite = write_suite(tmp_path / "suite", forced_choice_rows(4, 3), mode="logprob")
    summary = run(suite, tmp_path / "run", stub)
    assert (summary.planned, summary.done, summary.calls) == (4, 4, 4)
    assert all(body["logprobs"] and body["top_logprobs"] == 20 and body["max_tokens"] == 1
               for body in stub.batches.bodies)


def test_the_dry_run_counts_batches_and_prices_them_at_the_batch_rate(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", forced_choice_rows(30, 4))
    result = CliRunner().invoke(run_command, [str(suite), "--model", "openai/gpt-4o-mini", "--dry-run", "--batch",
                                              "--batch-size", "50"])
    assert result.exit_code == 0 and result.exception is None, result.output
    live_line, batch_line = result.output.splitlines()[1:]
    live = float(live_line.rsplit("$", 1)[1])
    batch = float(batch_line.rsplit("$", 1)[1])
    assert batch_line.startswith("  openai/gpt-4o-mini in batches: 3 batch files in 1 round (<= 50 requests each)")
    info = litellm.get_model_info("gpt-4o-mini")
    assert info["input_cost_per_token_batches"] == info["input_cost_per_token"] / 2  # so half the price
    assert batch == pytest.approx(live / 2, abs=1e-4)
    refused = CliRunner().invoke(run_command, [str(suite), "--model", "anthropic/claude-3-5-haiku-20241022",
                                               "--dry-run", "--batch"])
    assert refused.exit_code == 1 and "--batch: anthropic/claude-3-5-haiku-20241022 goes to" in refused.output


def test_a_model_litellm_does_not_know_is_refused() -> None:
    with pytest.raises(RunError, match=r"^--batch: litellm knows no provider for no-such-model \("):
        batch_provider("no-such-model")


@pytest.mark.parametrize("model", [None, "anthropic/claude-3-5-haiku-20241022"])
def test_litellm_cannot_create_an_anthropic_batch_which_is_why_it_is_refused(stub: StubServer,
                                                                             model: str | None) -> None:
    """The reason the refusal gives, checked against litellm itself: it sends nothing to the api_base and says
    so. When a litellm upgrade creates message batches, this fails, and anthropic/ can join the providers."""
    with pytest.raises(litellm.BadRequestError, match="doesn't support custom_llm_provider=anthropic for "
                                                      "'create_batch'"):
        asyncio.run(litellm.acreate_batch(completion_window="24h", endpoint="/v1/chat/completions",
                                          input_file_id="file-1", custom_llm_provider="anthropic",
                                          api_base=f"http://127.0.0.1:{stub.port}/v1", api_key="k",
                                          **({"model": model} if model else {})))
    assert sum(stub.batches.calls.values()) == stub.stats.requests == 0
