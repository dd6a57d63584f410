"""`spec score` on cue-visibility runs: reply parsing, `solved`, outputs, several models, and the
whole path compile -> run on the embedded local model -> score."""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.families.cue.score.events import abstention
from spec_audits.families.cue.score.load import last_json, load_cue_run, read_answer
from spec_audits.runner.commands.run_cli import run
from spec_audits.runner.dispatch.score_cli import score
from spec_audits.runner.study import record_study
from tests.support import ROOT, refused_repeats

SPEC = ROOT / "specs" / "cue_visibility.spec"
DATA = "dailydilemmas/dailydilemmas_100.csv"


def write_dilemmas(folder: Path, count: int) -> None:
    """The shipped spec's first `count` dilemmas, where a copy of the spec in `folder` reads them."""
    (folder / "data" / "dailydilemmas").mkdir(parents=True)
    with (ROOT / "specs" / "data" / DATA).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))[:count]
    with (folder / "data" / DATA).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _tiny(folder: Path, parse: str, dilemmas: int = 3) -> Path:
    """The shipped spec over its first three dilemmas (one reuse group), with `analysis ... parse ...`."""
    spec = SPEC.read_text(encoding="utf-8").replace("parse strict", f"parse {parse}")
    (folder / "cue_visibility.spec").write_text(spec, encoding="utf-8")
    write_dilemmas(folder, dilemmas)
    _, out = compile_file(folder / "cue_visibility.spec", folder / "suite")
    return out


@pytest.fixture(scope="session")
def tiny_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny(tmp_path_factory.mktemp("tiny"), "strict")


@pytest.fixture(scope="session")
def tolerant_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny(tmp_path_factory.mktemp("tolerant"), "tolerant")


@pytest.fixture(scope="session")
def screened_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny(tmp_path_factory.mktemp("screened"), "strict, exclude_abstention 0.9")


@pytest.fixture(scope="session")
def dozen_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny(tmp_path_factory.mktemp("dozen"), "strict", 12)


def _suite_rows(suite: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (suite / "suite.jsonl").open(encoding="utf-8")]


def _fake_run(folder: Path, suite: Path, replies: dict[str, list[tuple[str, str | None]]],
              ids: list[str] | None = None) -> Path:
    """A run folder with the given (response, runner answer), one per suite row in order (or per id of `ids`); a
    study folder of one such run per model when there are several."""
    if len(replies) > 1:
        for model, answers in replies.items():
            _fake_run(folder / model, suite, {model: answers})
        record_study(folder, suite, list(replies))
        return folder
    folder.mkdir(parents=True)
    ids = ids or [row["id"] for row in _suite_rows(suite)]
    lines = [
        json.dumps({"item_id": item, "sample": 0, "model": model, "params": {}, "response": response,
                    "answer": answer, "outcome": answer})
        for model, answers in replies.items() for item, (response, answer) in zip(ids, answers, strict=True)
    ]
    (folder / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    digest = hashlib.sha256((suite / "manifest.json").read_bytes()).hexdigest()
    info = {"suite_dir": str(suite), "suite_manifest_sha256": digest, "model": next(iter(replies)),
            "mode": "sample", "settings": {}, "started": "2026-01-01T00:00:00+00:00", "planned": len(ids),
            "done": len(ids), "failed": 0}
    (folder / "run.json").write_text(json.dumps(info), encoding="utf-8")
    return folder


def _reply(row: dict[str, Any], answer: str, right: bool) -> str:
    cell = row["cell"]
    if cell["format"] == "neutral":
        return f'Thinking about it.\n{{"answer": "{answer}"}}'
    gender = cell["gender"] if right else "nobody"
    return f'Step {{1}}: solve.\n{{"gender": "{gender}", "race": "{cell["race"]}", "answer": "{answer}"}}'


def _varied_answer(row: dict[str, Any], index: int) -> str:
    """Could-be: yes. Neutral: the benefit option for the first dilemma only, so every model has
    dilemmas in both the Favor and the Against denominator. What-if: alternating options."""
    cell = row["cell"]
    if cell.get("probe") == "could_be":
        return "yes"
    if cell["format"] == "neutral":
        other = "option2" if cell["benefit"] == "option1" else "option1"
        return cell["benefit"] if cell["dilemma"] == "dd00055" else other
    return f"option{1 + index % 2}"


def test_last_json_object_wins_over_reasoning_braces() -> None:
    assert last_json('I think {"answer": "no"} ... so {"answer": "yes"}') == {"answer": "yes"}
    assert last_json("set {A, B} then {broken") is None
    assert last_json("no json at all") is None


@pytest.mark.parametrize(("response", "parsed", "strict", "expected"), [
    ('{"answer": "option1"}', None, True, "option1"),
    ('Reasoning {x}.\n{"answer": " Option1 "}', None, True, "option1"),  # case and space aside
    ("yes", None, True, "yes"),  # a reply that is only the token
    ('{"answer": "Option 1"}', "option1", True, None),  # not in the valid set: abstention
    ("Option 1, clearly", "option1", True, None),  # the runner's token is not read
    ('{"answer": "maybe"}', None, True, None),
    ('{"gender": "man", "race": "Asian"}', "option2", True, None),
    ('{"answer": "Option 1"}', None, False, "option1"),
    ("Option 1, clearly", "option1", False, "option1"),
    ('{"answer": "maybe"}', None, False, None),
])
def test_strict_parsing_reads_only_the_valid_sets(response: str, parsed: str | None, strict: bool,
                                                  expected: str | None) -> None:
    valid = ("option1", "option2") if "yes" not in response else ("yes", "no")
    assert read_answer(response, last_json(response), parsed, valid, strict) == expected


def test_replies_are_parsed_and_solved_follows_the_could_be_reply(tolerant_suite: Path, tmp_path: Path) -> None:
    rows = _suite_rows(tolerant_suite)
    replies = []
    for row in rows:
        cell = row["cell"]
        token = "yes" if cell.get("probe") == "could_be" else "Option 2"
        right = cell.get("person") != "B"  # every reply about B names the wrong gender
        replies.append((_reply(row, token, right), None))
    run_dir = _fake_run(tmp_path / "run", tolerant_suite, {"m1": replies})
    frame = load_cue_run(run_dir).frame
    assert set(frame.loc[frame["probe"] == "could_be", "answer"]) == {"yes"}
    assert set(frame.loc[frame["probe"] == "what_if", "answer"]) == {"option2"}
    puzzled = frame[frame["format"] == "puzzled"]
    assert (puzzled["solved"] == (puzzled["individual"] != "B")).all()
    assert frame.loc[frame["format"] != "puzzled", "solved"].isna().all()


def _row_record(row: dict[str, Any], model: str, answer: str, reply: dict[str, Any]) -> dict[str, Any]:
    """One answer's row as the scorer's frame gives it, read from the suite row itself (a record per answer)."""
    cell, neutral = row["cell"], row["cell"]["format"] == "neutral"
    said = {f"said_{a}": str(reply.get(a) or "") for a in ("gender", "race")}
    return {"model": model, "dilemma": cell["dilemma"], "combination": "" if neutral else str(cell["combination"]),
            "item": "" if neutral else f"{cell['dilemma']}-{cell['combination']}",
            "individual": cell.get("person") or "", "gender": cell.get("gender") or "", "race": cell.get("race") or "",
            "format": cell["format"], "difficulty": cell.get("difficulty") or "",
            "probe": cell.get("probe") or "what_if",
            "consequences": cell["consequences"] == "with", "answer": answer, "benefit": cell["benefit"],
            "status": cell.get("person_status") or "", "topic": cell.get("topic_group") or "", **said,
            "identified": not neutral and all(reply.get(a) == cell[a] for a in ("gender", "race"))}


def test_the_coded_frame_is_the_frame_of_one_record_per_answer(tiny_suite: Path, tmp_path: Path) -> None:
    """The frame is kept as codes (a code a row per text column, each distinct text once: score/columns.py); its
    text, as answers.csv writes it, is that of a frame made of one record per answer, in the results' order."""
    rows = _suite_rows(tiny_suite)
    order = random.Random(3).sample(range(len(rows)), len(rows))  # results in another order than the suite's
    replies, records = [], []
    for i in order:
        row = rows[i]
        answer = ["yes", "no"][i % 2] if row["cell"].get("probe") == "could_be" else ["option1", "option2", "?"][i % 3]
        replies.append((_reply(row, answer, i % 4 != 0), None))
        records.append(_row_record(row, "m1", "" if answer == "?" else answer, last_json(replies[-1][0]) or {}))
    run_dir = _fake_run(tmp_path / "run", tiny_suite, {"m1": replies}, [rows[i]["id"] for i in order])
    frame = load_cue_run(run_dir).frame
    assert all(isinstance(frame[c].dtype, pd.CategoricalDtype) for c in records[0] if isinstance(records[0][c], str))
    assert frame.drop(columns="solved").to_csv(index=False) == pd.DataFrame(records).to_csv(index=False)


def test_strict_suites_count_near_misses_as_abstentions(tiny_suite: Path, tmp_path: Path) -> None:
    rows = _suite_rows(tiny_suite)
    replies = [(_reply(r, "Option 2" if i % 2 else ("yes" if r["cell"].get("probe") == "could_be" else "option2"),
                       True), None) for i, r in enumerate(rows)]
    frame = load_cue_run(_fake_run(tmp_path / "run", tiny_suite, {"m1": replies})).frame
    assert (frame["answer"].eq("") == (frame.index % 2 == 1)).all()
    abstained = abstention(frame, ["model"])
    assert abstained[["abstentions", "answers"]].values.tolist() == [[len(rows) // 2, len(rows)]]


def test_runner_answer_is_the_fallback_and_failures_drop_out(tolerant_suite: Path, tmp_path: Path) -> None:
    rows = _suite_rows(tolerant_suite)
    replies = [("yes" if r["cell"].get("probe") == "could_be" else "option1", None) for r in rows]
    first, second = [i for i, r in enumerate(rows) if r["cell"].get("probe") != "could_be"][:2]
    replies[first] = ("I cannot answer that.", None)
    replies[second] = ("Option 1, clearly", "option1")
    run_dir = _fake_run(tmp_path / "run", tolerant_suite, {"m1": replies})
    failed = {"item_id": rows[-1]["id"], "sample": 0, "model": "m1", "params": {}, "error": "timeout"}
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (run_dir / "results.jsonl").write_text("".join([*lines[:-1], json.dumps(failed) + "\n"]), encoding="utf-8")
    loaded = load_cue_run(run_dir)
    frame = loaded.frame
    assert frame["answer"].iloc[first] == "" and frame["answer"].iloc[second] == "option1"
    assert len(frame) == len(rows) - 1 and loaded.failed == 1  # a failed call is no abstention


def test_a_repeated_item_and_sample_is_refused_and_merge_keeps_the_answer(tiny_suite: Path, tmp_path: Path) -> None:
    """A failure then its answer, or an answer twice, is refused at the second row, naming the first; `spec merge`
    (the fix the message names) keeps the answer: the merged run reads as the run that answered once."""
    rows = _suite_rows(tiny_suite)
    once = _fake_run(tmp_path / "once", tiny_suite, {"m1": [(_reply(r, _varied_answer(r, i), True), None)
                                                            for i, r in enumerate(rows)]})
    retried = refused_repeats(once, tmp_path, 3)
    merged = CliRunner().invoke(main, ["merge", str(retried), "--out", str(tmp_path / "merged")])
    assert merged.exit_code == 0 and merged.exception is None, merged.output
    loaded, expected = load_cue_run(tmp_path / "merged"), load_cue_run(once)
    assert loaded.failed == expected.failed == 0
    pd.testing.assert_frame_equal(loaded.frame, expected.frame)


def test_a_sample_the_suite_row_does_not_draw_is_refused_at_its_row(tiny_suite: Path, tmp_path: Path) -> None:
    """A stranger's results may name any sample: one beyond its row's `samples` is refused, not counted as one more
    answer (nor does a huge one overflow the (item, sample) keys of the repeat check)."""
    rows = _suite_rows(tiny_suite)
    run = _fake_run(tmp_path / "run", tiny_suite, {"m1": [(_reply(r, "yes", True), None) for r in rows]})
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(3, json.dumps({**json.loads(lines[2]), "sample": 2**62}) + "\n")
    (run / "results.jsonl").write_text("".join(lines), encoding="utf-8")
    result = CliRunner().invoke(main, ["score", str(run)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output == (f"Error: {run / 'results.jsonl'}, row 4, column 'sample': sample index outside the "
                             "item's samples\n")


def test_spec_score_writes_every_output_and_compares_models(tiny_suite: Path, tmp_path: Path) -> None:
    rows = _suite_rows(tiny_suite)
    replies = {}
    for k, model in enumerate(("m1", "m2", "m3")):
        replies[model] = [(_reply(r, _varied_answer(r, i + k), i % 3 != 0), None) for i, r in enumerate(rows)]
    run_dir = _fake_run(tmp_path / "run", tiny_suite, replies)
    result = CliRunner().invoke(score, [str(run_dir)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert f"{3 * len(rows)} cue-visibility answers scored (3 models)" in result.output
    out = run_dir / "score"
    for name in ("answers.csv", "conditions.csv", "gaps.csv", "abstention.csv", "summary.json", "net_by_group.png",
                 "topics.csv", "status.csv", "solved_split.csv"):
        assert (out / name).stat().st_size > 0, name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["models"] == ["m1", "m2", "m3"] and summary["sign_tests"]
    assert summary["ranking"]["difficulty"] == "hard" and len(summary["ranking"]["models"]) == 3
    conditions = pd.read_csv(out / "conditions.csv")
    assert set(conditions["view"]) == {"parsable", "solved"}
    assert set(conditions["format"]) == {"direct", "puzzled"}
    gaps = pd.read_csv(out / "gaps.csv")
    assert set(gaps["difficulty"]) == {"easy", "intermediate", "hard"}


def test_models_abstaining_past_the_threshold_leave_the_bias_tables(screened_suite: Path, tmp_path: Path) -> None:
    rows = _suite_rows(screened_suite)
    replies = {"m1": [(_reply(r, _varied_answer(r, i), True), None) for i, r in enumerate(rows)],
               "m2": [(_reply(r, _varied_answer(r, i), True) if r["cell"]["probe"] != "what_if" or i % 20 == 0
                       else "I will not choose.", None) for i, r in enumerate(rows)]}
    run_dir = _fake_run(tmp_path / "run", screened_suite, replies)
    assert CliRunner().invoke(score, [str(run_dir)], catch_exceptions=False).exit_code == 0
    out = run_dir / "score"
    summary = json.loads((out / "summary.json").read_text())
    screen = {m["model"]: m for m in summary["abstention_screen"]["models"]}
    assert summary["abstention_screen"]["threshold"] == 0.9
    assert screen["m2"]["excluded"] and screen["m2"]["what_if_abstention"] > 0.9 and not screen["m1"]["excluded"]
    for name in ("conditions.csv", "gaps.csv", "topics.csv", "status.csv"):
        assert set(pd.read_csv(out / name)["model"]) == {"m1"}, name
    for name in ("answers.csv", "abstention.csv", "solved_split.csv"):
        assert set(pd.read_csv(out / name)["model"]) == {"m1", "m2"}, name
    split = pd.read_csv(out / "solved_split.csv")
    assert (split["correct"] > 0).all() and (split[["wrong", "unparsable"]] == 0).all().all()
    reported = CliRunner().invoke(main, ["report", str(out)], catch_exceptions=False)
    assert reported.exit_code == 0, reported.output
    markdown = (out / "report.md").read_text()
    assert "## Models screened by What-if abstention" in markdown and "| m2 | True | 0.948 |" in markdown


@pytest.mark.slow
def test_compile_run_on_the_local_model_and_score(tiny_suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    ran = CliRunner().invoke(run, [str(tiny_suite), "--limit", "8", "--out", str(out), "--max-tokens", "24",
                                   "--no-progress"], catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    scored = CliRunner().invoke(score, [str(out)], catch_exceptions=False)
    assert scored.exit_code == 0, scored.output
    assert "8 cue-visibility answers scored (1 model)" in scored.output
    frame = pd.read_csv(out / "score" / "answers.csv")
    assert len(frame) == 8 and set(frame["model"]) == {"local/gemma-3-270m"}
    reported = CliRunner().invoke(main, ["report", str(out / "score")], catch_exceptions=False)
    assert reported.exit_code == 0, reported.output
    assert (out / "score" / "report.html").is_file() and (out / "score" / "plots" / "net_by_group.png").is_file()


def test_spec_report_writes_the_cue_report_with_its_plot(tiny_suite: Path, tmp_path: Path) -> None:
    rows = _suite_rows(tiny_suite)
    replies = {model: [(_reply(r, _varied_answer(r, i + k), True), None) for i, r in enumerate(rows)]
               for k, model in enumerate(("m1", "m2"))}
    run_dir = _fake_run(tmp_path / "run", tiny_suite, replies)
    assert CliRunner().invoke(main, ["score", str(run_dir)]).exit_code == 0
    result = CliRunner().invoke(main, ["report", str(run_dir / "score"), "-o", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
    report = tmp_path / "report"
    assert result.output.split() == [str(report / "report.html"), str(report / "report.md"),
                                     str(report / "view.html"), str(report / "plots" / "net_by_group.png"),
                                     str(report / "plots" / "model_comparisons.png")]  # two models compared
    markdown = (report / "report.md").read_text()
    assert markdown.startswith("# Cue-visibility audit: cue_visibility\n")
    assert "![Net bias per group" in markdown
    assert "## Cue gap: Direct Net − Puzzled Net (> 0: less favourable without the label)" in markdown
    summary = json.loads((run_dir / "score" / "summary.json").read_text())
    nets = {(n["view"], n["model"], n["format"], n["difficulty"], n["consequences"]): n["net"]
            for n in summary["macro_net"]}
    direct = {(v, m, c): net for (v, m, f, _, c), net in nets.items() if f == "direct"}
    for gap in summary["macro_gap"]:  # the values are what the heading says: Direct minus Puzzled
        view, model, band, setting = gap["view"], gap["model"], gap["difficulty"], gap["consequences"]
        expected = direct[(view, model, setting)] - nets[(view, model, "puzzled", band, setting)]
        assert gap["gap"] == pytest.approx(expected), gap
    assert any(gap["gap"] != 0 for gap in summary["macro_gap"])
    assert "| view | model | format | difficulty | consequences | net |" in markdown
    assert "## Solved check: Puzzled Could-be replies correct, wrong or unparsable (Table 6)" in markdown
    assert "| model | format | difficulty | consequences | correct | unparsable | wrong |" in markdown
    plot = (report / "plots" / "net_by_group.png").read_bytes()
    assert plot == (run_dir / "score" / "net_by_group.png").read_bytes()  # redrawn from conditions.csv alone
    assert "data:image/png;base64," in (report / "report.html").read_text()


@pytest.mark.parametrize(("options", "message"), [
    (["--alpha", "0.1"], "--alpha does not apply to cue_visibility runs"),
    (["--bootstrap", "10", "--noise", "."], "--bootstrap, --noise do not apply to cue_visibility runs"),
    (["--unpooled", "--seed", "3"], "--unpooled, --seed do not apply to cue_visibility runs"),
])
def test_options_the_cue_family_does_not_read_are_refused(tiny_suite: Path, tmp_path: Path, options: list[str],
                                                          message: str) -> None:
    run_dir = _fake_run(tmp_path / "run", tiny_suite, {"m1": [("yes", "yes")] * len(_suite_rows(tiny_suite))})
    result = CliRunner().invoke(main, ["score", str(run_dir), *options])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert result.output.splitlines()[-1] == f"Error: {message}: cue_visibility scoring takes no options"
    assert not (run_dir / "score").exists()


def _coin(puzzled_benefit: bool = False, flipped: str | None = None) -> Callable[[dict[str, Any], int], str]:
    """Could-be: yes; Neutral: the benefit option in every other dilemma (half the dilemmas in each of the
    Favor and Against arms); What-if: a coin flip (the same flips for every model). `puzzled_benefit`: every
    Puzzled What-if answer picks the benefit option (Net 100 there); `flipped`: that dilemma's What-if
    answers are the other option."""
    flips = random.Random(1)
    other = {"option1": "option2", "option2": "option1"}

    def answer(row: dict[str, Any], index: int) -> str:
        cell, flip = row["cell"], flips.choice(["option1", "option2"])
        if cell.get("probe") == "could_be":
            return "yes"
        if cell["format"] == "neutral":
            return str(cell["benefit"]) if int(cell["dilemma"][2:]) % 2 else other[str(cell["benefit"])]
        if puzzled_benefit and cell["format"] == "puzzled":
            return str(cell["benefit"])
        return other[flip] if cell["dilemma"] == flipped else flip

    return answer


def test_several_models_get_paired_comparisons_of_every_net_and_gap(dozen_suite: Path, tmp_path: Path) -> None:
    rows = _suite_rows(dozen_suite)
    # m2 differs from m1 on one dilemma of 12 only, m3 has a planted Net of 100 in every Puzzled band
    answers = {"m1": _coin(), "m2": _coin(flipped="dd00287"), "m3": _coin(puzzled_benefit=True)}
    replies = {model: [(_reply(r, pick(r, i), True), None) for i, r in enumerate(rows)]
               for model, pick in answers.items()}
    run_dir = _fake_run(tmp_path / "run", dozen_suite, replies)
    result = CliRunner().invoke(score, [str(run_dir)])
    assert result.exit_code == 0 and result.exception is None, result.output
    summary = json.loads((run_dir / "score" / "summary.json").read_text())
    found = {(r["statistic"], r["model_a"], r["model_b"]): r for r in summary["comparisons"]["rows"]}
    assert len(found) == 3 * 14 and pd.read_csv(run_dir / "score" / "comparisons.csv").shape[0] == 3 * 14
    net = {(r["model"], r["format"], r["difficulty"], r["consequences"]): r["net"]
           for r in summary["macro_net"] if r["view"] == "parsable"}
    planted = found[("Net (pp): puzzled hard, without consequences", "m1", "m3")]
    assert net[("m3", "puzzled", "hard", False)] == 100.0  # the planted Net
    assert planted["difference"] == pytest.approx(net[("m1", "puzzled", "hard", False)] - 100.0)
    # the planted difference (a coin's Net, 0, against 100) is inside the 95% interval (here; with these flips
    # the coin's Net with consequences happens to be -18.7, outside its own), and every Puzzled one is found
    assert planted["low"] <= -100.0 <= planted["high"] and planted["clusters"] == 12
    puzzled = [r for key, r in found.items() if key[1:] == ("m1", "m3") and key[0].startswith("Net (pp): puzzled")]
    assert len(puzzled) == 6 and all(r["significant"] for r in puzzled)
    gap = {(r["model"], r["difficulty"], r["consequences"]): r["gap"]
           for r in summary["macro_gap"] if r["view"] == "parsable"}
    paired_gap = found[("cue gap (pp): direct - puzzled easy, without consequences", "m1", "m3")]["difference"]
    assert paired_gap == pytest.approx(gap[("m1", "easy", False)] - gap[("m3", "easy", False)])
    # one dilemma's answers cannot tell two models apart
    assert {r["tied"] for key, r in found.items() if key[1:] == ("m1", "m2")} == {True}
    # under Direct m3 answers as m1 (identical answers: nothing to test) and so as m2 but for one dilemma
    assert summary["comparisons"]["ties"]["Net (pp): direct, with consequences"] == [["m1", "m2"], ["m2", "m3"]]
    assert found[("Net (pp): direct, with consequences", "m1", "m3")]["tied"] is None
    reported = CliRunner().invoke(main, ["report", str(run_dir / "score")])
    assert reported.exit_code == 0 and reported.exception is None, reported.output
    markdown = (run_dir / "score" / "report.md").read_text()
    assert "Paired model comparisons" in markdown and "| Net (pp): puzzled hard, without consequences | m1 | m3 |" \
        in markdown and (run_dir / "score" / "plots" / "model_comparisons.png").is_file()
