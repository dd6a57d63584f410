"""Answer parsing, stratified --limit, --shard with merge, suite errors and --dry-run."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.contract.reader import RECOMPILE, read_results, read_suite
from spec_audits.runner.answers import parse_answer
from spec_audits.runner.commands.run_cli import merge, run
from spec_audits.runner.execute import run_suite
from spec_audits.runner.item_runner import answer_probabilities
from spec_audits.runner.merge import MergeError, merge_runs
from spec_audits.runner.plan import Shard, plan
from spec_audits.runner.run_config import RunConfig
from tests.stub_server import StubConfig, StubServer
from tests.support import shipped_suite

AB = ("A", "B")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A", "A"),
        (" B\n", "B"),
        ("Option A", "A"),
        ("A.", "A"),
        ("**B**", "B"),
        ("I choose A", "A"),
        ("I would choose option B.", "B"),
        ("Answer: B", "B"),
        ("A) tea", "A"),
        ("The answer is **B**.", "B"),
        ("Which one?", None),
        ("A or B", None),
        ("Both A and B are fine", None),
        ("Apple", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_answer_strict_then_tolerant(text: str | None, expected: str | None) -> None:
    assert parse_answer(text, AB) == expected


def test_parse_answer_labels() -> None:
    labels = ("ACK-AFFECTED", "ACK-DISCLAIMED", "DENIED")
    assert parse_answer("Label: DENIED", labels) == "DENIED"
    assert parse_answer("ack-disclaimed", labels) == "ACK-DISCLAIMED"


def test_answer_probabilities_normalise_over_valid_tokens() -> None:
    top = [
        {"token": "A", "logprob": -1.0},
        {"token": " A", "logprob": -1.0},
        {"token": "B", "logprob": -2.0},
        {"token": "Which", "logprob": -0.1},
    ]
    probs = answer_probabilities(top, ["A", "B"])
    assert probs and abs(sum(probs.values()) - 1) < 1e-12 and probs["A"] > 0.8
    assert answer_probabilities([{"token": "Which", "logprob": 0.0}], ["A", "B"]) is None


def test_the_stub_answers_a_logprob_call_with_its_tokens() -> None:
    """benchmarks/scale_bench.py runs a yes/no logprob suite on the stub: with A and B no row had an answer."""
    body = {"messages": [{"role": "user", "content": "Approve? Answer yes or no."}], "logprobs": True}
    reply = StubServer(StubConfig(tokens=("yes", "no"))).completion(body)["choices"][0]
    answer = reply["message"]["content"]
    probs = answer_probabilities(reply["logprobs"]["content"][0]["top_logprobs"], ["yes", "no"])
    assert answer in ("yes", "no") and probs is not None
    assert probs[answer] == pytest.approx(0.7) and sum(probs.values()) == pytest.approx(1.0)
    assert answer_probabilities(StubServer().completion(body)["choices"][0]["logprobs"]["content"][0]["top_logprobs"],
                                ["yes", "no"]) is None


def test_limit_is_seeded_and_stratified_over_cells(make_suite: Callable[..., Path]) -> None:
    rows = read_suite(make_suite(n=40, samples=3)).rows
    picked = plan(rows, mode="sample", limit=8, seed=1)
    ids = [w.row.id for w in picked]
    assert len(set(ids)) == 8 and len(picked) == 24
    per_cell = Counter(json.dumps(w.row.cell, sort_keys=True) for w in picked if w.sample == 0)
    assert sorted(per_cell.values()) == [2, 2, 2, 2]
    assert ids != [r.id for r in rows[:8] for _ in range(3)]
    assert [w.key for w in plan(rows, mode="sample", limit=8, seed=1)] == [w.key for w in picked]
    assert {w.row.id for w in plan(rows, mode="sample", limit=8, seed=2)} != set(ids)


def test_shards_partition_the_suite_and_merge_without_duplicates(
    make_suite: Callable[..., Path], tmp_path: Path
) -> None:
    suite = make_suite(n=30, samples=2)
    rows = read_suite(suite).rows
    shards = [{w.key for w in plan(rows, mode="sample", shard=Shard(i, 3))} for i in (1, 2, 3)]
    assert sum(map(len, shards)) == 60 and len(set().union(*shards)) == 60
    server = StubServer()
    api_base = server.start()
    try:
        for i in (1, 2, 3):
            config = RunConfig(
                suite_dir=suite,
                out=tmp_path / f"s{i}",
                model="openai/stub",
                api_base=api_base,
                shard=Shard(i, 3),
                progress=False,
            )
            run_suite(config)
    finally:
        server.stop()
    dirs = [str(tmp_path / f"s{i}") for i in (1, 2, 3)]
    result = CliRunner().invoke(merge, [*dirs, dirs[0], "--out", str(tmp_path / "merged")])
    assert result.exit_code == 0, result.output
    merged = read_results(tmp_path / "merged" / "results.jsonl")
    assert len(merged) == 60 == len({(r.item_id, r.sample) for r in merged})


def test_merge_refuses_runs_of_different_suites(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    server = StubServer()
    api_base = server.start()
    try:
        for name, n in (("one", 3), ("two", 4)):
            run_suite(
                RunConfig(
                    suite_dir=make_suite(n=n, samples=1, name=name),
                    out=tmp_path / name,
                    model="openai/stub",
                    api_base=api_base,
                    progress=False,
                )
            )
    finally:
        server.stop()
    with pytest.raises(MergeError, match="cannot merge"):
        merge_runs([tmp_path / "one", tmp_path / "two"], tmp_path / "merged")


def test_a_bad_suite_line_is_a_clear_error_naming_file_and_line(
    make_suite: Callable[..., Path], tmp_path: Path
) -> None:
    suite = make_suite(n=3, samples=1)
    lines = (suite / "suite.jsonl").read_text().splitlines()
    broken = json.loads(lines[1])
    broken["samples"] = 0
    (suite / "suite.jsonl").write_text("\n".join([lines[0], json.dumps(broken), lines[2]]) + "\n")
    result = CliRunner().invoke(run, [str(suite), "--out", str(tmp_path / "r")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    problem = "samples: Input should be greater than or equal to 1"
    assert result.output == f"Error: {suite / 'suite.jsonl'}:2: {problem}; {RECOMPILE}\n"


def test_bad_flag_values_are_usage_errors(make_suite: Callable[..., Path]) -> None:
    suite = str(make_suite(n=2, samples=1))
    for flags in (["--shard", "4/3"], ["--shard", "x"], ["--limit", "0"], ["--concurrency", "0"]):
        result = CliRunner().invoke(run, [suite, *flags, "--dry-run"])
        assert result.exit_code == 2, (flags, result.output)


def test_dry_run_counts_calls_tokens_and_cost_without_calling(make_suite: Callable[..., Path]) -> None:
    followup = {"name": "probe", "content": "Why?", "judge": {"labels": ["X", "Y"], "prompt": "{{ reply }}"}}
    suite = make_suite(n=10, samples=3, followups=[followup])
    args = [str(suite), "--dry-run", "--model", "openai/gpt-4o-mini", "--judge-model", "openai/gpt-4o"]
    result = CliRunner().invoke(run, args)
    assert result.exit_code == 0, result.output
    assert "30 answers" in result.output
    assert "openai/gpt-4o-mini: 60 calls" in result.output and "openai/gpt-4o: 30 calls" in result.output
    assert "cost $" in result.output and not (suite.parent / "runs").exists()


def test_output_folder_of_another_run_is_refused(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    server = StubServer()
    api_base = server.start()
    try:
        config = RunConfig(
            suite_dir=make_suite(n=2, samples=1),
            out=tmp_path / "r",
            model="openai/stub",
            api_base=api_base,
            progress=False,
        )
        run_suite(config)
        other = ["--out", str(tmp_path / "r"), "--model", "openai/other", "--api-base", api_base]
        result = CliRunner().invoke(run, [str(config.suite_dir), *other])
    finally:
        server.stop()
    assert result.exit_code == 1 and "use another --out" in result.output


def test_unknown_model_stops_the_run_with_one_message(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    result = CliRunner().invoke(
        run, [str(make_suite(n=20, samples=2)), "--model", "nosuchmodel", "--out", str(tmp_path / "r"), "--no-progress"]
    )
    assert result.exit_code == 3 and isinstance(result.exception, SystemExit), result.exception
    assert result.output == (
        "Error: run stopped: nosuchmodel: litellm knows no provider for this name. Write it as provider/model, "
        f"e.g. openai/gpt-4o-mini. Answers so far are kept in {tmp_path / 'r'}; once that is fixed, rerun the same "
        "command to resume\n"
    )
    assert read_results(tmp_path / "r" / "results.jsonl") == []


def test_limit_on_the_triage_suite_reaches_every_condition_of_the_design() -> None:
    suite = read_suite(shipped_suite("triage"))
    assert suite.strata == ["factor", "influence", "condition"]
    picked = plan(suite.rows, mode="sample", limit=75, seed=3, strata=suite.strata)
    strata = Counter((w.row.cell["factor"], w.row.cell["influence"], w.row.cell["condition"])
                     for w in picked if w.sample == 0)
    # 5 shared baselines + 5 factors x 7 influences x 2 directions, one row each
    assert len(strata) == 75 and set(strata.values()) == {1}
