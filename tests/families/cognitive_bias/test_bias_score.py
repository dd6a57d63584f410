"""`spec score` on a conditional-bias run: answers mapped back through reversal, Eq. 1 per condition,
Table 1, the released per-cell schema with Bonferroni, the diagonal test, DiD, SCM and PSM, cross-checked
by hand against scipy and statsmodels."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from spec_audits.cli import main
from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.families.cognitive_bias.score.causal import logistic_l2, propensity
from spec_audits.families.cognitive_bias.score.metric import bias_metric
from tests.support import ROOT, suite_rows

SPEC = ROOT / "specs" / "cognitive_bias.spec"



def _answer(row: dict[str, Any]) -> str | None:
    """A deterministic spread of displayed options; one abstention."""
    digest = hashlib.sha256(row["id"].encode()).digest()
    if digest[0] < 3:
        return None
    return str(1 + digest[1] % len(row["answers"]))


@pytest.fixture(scope="session")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    base = tmp_path_factory.mktemp("score")
    suite = base / "suite"
    compile_file(_paper_protocol(base), suite)
    rows = suite_rows(suite)
    result = _run_and_score(base / "run", suite, rows, _answer)
    assert result.startswith("53 bank rows scored (1 model(s))")
    return base / "run" / "score", rows


def _paper_protocol(base: Path) -> Path:
    """The shipped spec under the paper's protocol, which reverses half the units' options (the shipped
    authors' protocol reverses none), beside a copy of its data."""
    shutil.copytree(SPEC.parent / "data" / "cognitive_bias", base / "data" / "cognitive_bias")
    text = SPEC.read_text(encoding="utf-8").replace("protocol authors extract extract_option", "protocol paper")
    (base / SPEC.name).write_text(text, encoding="utf-8")
    return base / SPEC.name


def _run_and_score(run: Path, suite: Path, rows: list[dict[str, Any]], answer: Any, model: str = "m") -> str:
    """A run folder whose rows `model` answers by `answer(row)`, scored; what `spec score` printed."""
    _write_run(run, suite, rows, answer, model)
    result = CliRunner().invoke(main, ["score", str(run)])
    assert result.exit_code == 0 and result.exception is None, result.output
    return result.output


def _write_run(run: Path, suite: Path, rows: list[dict[str, Any]], answer: Any, model: str) -> None:
    """A run folder whose rows `model` answers by `answer(row)`."""
    run.mkdir()
    lines = [json.dumps({"item_id": r["id"], "sample": 0, "model": model, "params": {}, "response": answer(r),
                         "answer": answer(r), "outcome": r["answers"].get(answer(r))}) for r in rows]
    (run / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    digest = hashlib.sha256((suite / "manifest.json").read_bytes()).hexdigest()
    info = {"suite_dir": str(suite), "suite_manifest_sha256": digest, "model": model, "mode": "sample",
            "settings": {}, "started": "2026-01-01T00:00:00+00:00", "planned": len(rows), "done": len(rows),
            "failed": 0}
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")


def test_a_first_option_picker_has_position_share_one_in_both_orders(
        scored: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    rows = scored[1]
    suite = scored[0].parent.parent / "suite"
    _run_and_score(tmp_path / "run", suite, rows, lambda row: "1")
    found = json.loads((tmp_path / "run" / "score" / "summary.json").read_text())["position"]["m"]["all"]
    assert found["reversed_0"]["share"] == found["reversed_1"]["share"] == found["position"] == 1.0
    assert found["reversed_0"]["n"] + found["reversed_1"]["n"] == len(rows) and found["p"] < 1e-6
    spread = json.loads((scored[0] / "summary.json").read_text())["position"]["m"]["all"]
    assert spread["position"] < 0.5 and spread["p"] > 0.05  # uniform over the displayed options: no order effect
    items = pd.read_csv(tmp_path / "run" / "score" / "positions.csv")
    assert set(items["share"]) == {1.0} and set(items["reversed"]) == {0, 1}


def _hand_metric(rows: list[dict[str, Any]], bank_row: str, condition: str) -> float:
    """Eq. 1 from the suite rows themselves: answers mapped back to original indices."""
    picked = {}
    for r in rows:
        c = r["cell"]
        owner = r["meta"].get("bank_row") or r["unit"]
        unit = bank_row.rsplit("|", 1)[0]
        if c["condition"] == condition and owner == (unit if condition != "biased_turn" else bank_row):
            token = _answer(r)
            picked[c["arm"]] = float(r["answers"][token]) if token else math.nan
            metric = r["meta"]["metric"]
    return bias_metric(picked["control"], picked["treatment"], metric)


def test_rows_carry_eq1_per_condition_and_the_effect_identity(scored: tuple[Path, list[dict[str, Any]]]) -> None:
    out, rows = scored
    frame = pd.read_csv(out / "rows.csv")
    assert len(frame) == 53
    for record in frame.head(12).itertuples():
        for condition in ("zero_shot", "neutral_turn", "biased_turn"):
            expected = _hand_metric(rows, record.bank_row, condition)
            got = getattr(record, f"m_{condition}")
            assert (math.isnan(expected) and math.isnan(got)) or got == pytest.approx(expected, abs=1e-12)
    complete = frame.dropna(subset=["total"])
    assert (complete["total"] - complete["presence"] - complete["content"]).abs().max() < 1e-12
    abstained = pd.read_csv(out / "abstention.csv")
    assert abstained["abstained"].sum() == sum(_answer(r) is None for r in rows)


def test_table1_and_cells_match_scipy_and_bonferroni_counts_defined_p(scored: tuple[Path, list[Any]]) -> None:
    out, _ = scored
    frame = pd.read_csv(out / "rows.csv")
    effects = pd.read_csv(out / "effects.csv").set_index("quantity")
    content = frame["content"].dropna()
    test = stats.ttest_1samp(content, 0.0)
    assert effects.loc["content", "t"] == pytest.approx(test.statistic)
    assert effects.loc["content", "p"] == pytest.approx(test.pvalue)
    cells = pd.read_csv(out / "cells_content.csv")
    assert list(cells.columns) == ["target_bias", "human_bias", "n", "mean_delta", "std_delta", "t_stat", "p_value",
                                   "cohens_d", "significant_05", "p_bonferroni", "significant_bonferroni"]
    assert cells["n"].sum() == len(content)
    defined = cells["p_value"].notna().sum()
    assert np.allclose(cells["p_bonferroni"].dropna(), np.minimum(1, cells["p_value"].dropna() * defined))


def test_diagonal_did_scm_and_psm_are_written(scored: tuple[Path, list[Any]]) -> None:
    out, _ = scored
    frame = pd.read_csv(out / "rows.csv")
    diagonal = json.loads((out / "diagonal.json").read_text())["m"]
    on = frame.loc[frame["diagonal"] == 1, "content"].dropna()
    off = frame.loc[frame["diagonal"] == 0, "content"].dropna()
    assert diagonal["t"] == pytest.approx(stats.ttest_ind(on, off).statistic)
    causal = pd.read_csv(out / "causal.csv").set_index("variant")
    complete = frame.dropna(subset=["m_zero_shot", "m_neutral_turn", "m_biased_turn"])
    assert causal.loc["abs", "att"] == pytest.approx(complete["content"].mean(), abs=1e-12)
    signed = (complete["m_biased_turn"] - complete["m_neutral_turn"]).mean()
    assert causal.loc["authors", "att"] == pytest.approx(signed, abs=1e-12)
    scm = pd.read_csv(out / "scm.csv")
    assert not scm.empty and all(abs(p * d - round(p * d)) < 1e-9 for p, d in zip(scm["p_placebo"], scm["donors"],
                                                                              strict=True))
    assert "att_unmatched" in json.loads((out / "psm.json").read_text())["m"]
    assert (out / "heatmaps.png").is_file() and (out / "causal.png").is_file()


def test_the_propensity_is_the_l2_logistic_optimum() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(60, 3))
    treated = rng.random(60) < 1 / (1 + np.exp(-x[:, 0]))
    w, b = logistic_l2(x, treated)
    p = propensity(x, treated)
    assert np.allclose(p, 1 / (1 + np.exp(-(x @ w + b))))
    # first-order conditions of 0.5|w|^2 + C * sum log-loss (C = 1): w = X'(t - p) and sum(t - p) = 0
    residual = treated.astype(float) - p
    assert np.allclose(w, x.T @ residual, atol=1e-5)
    assert abs(residual.sum()) < 1e-5
    assert 0 < np.abs(w).sum() < np.abs(x.T @ (treated - treated.mean())).sum()  # shrunk, not zero


def test_score_cells_rebuilds_table1_from_the_cell_moments(scored: tuple[Path, list[Any]], tmp_path: Path) -> None:
    out, _ = scored
    result = CliRunner().invoke(main, ["score", "--cells", str(out / "cells_content.csv"), "-o", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out / "rows.csv")
    content = frame["content"].dropna()
    summary = json.loads((tmp_path / "c" / "cells_summary.json").read_text())["models"]["cells_content"]
    assert summary["pooled"]["mean"] == pytest.approx(content.mean(), abs=1e-12)
    assert summary["pooled"]["t"] == pytest.approx(stats.ttest_1samp(content, 0.0).statistic, rel=1e-9)
    on = frame.loc[frame["diagonal"] == 1, "content"].dropna()
    off = frame.loc[frame["diagonal"] == 0, "content"].dropna()
    assert summary["att_unmatched"] == pytest.approx(on.mean() - off.mean(), abs=1e-12)
    assert summary["t_diagonal"] == pytest.approx(stats.ttest_ind(on, off).statistic, rel=1e-9)


def test_score_cells_names_the_missing_column_and_the_bad_row(tmp_path: Path) -> None:
    bad = tmp_path / "cells.csv"
    bad.write_text("target_bias,human_bias,n,mean_delta\nAnchoring,Anchoring,3,0.1\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["score", "--cells", str(bad)])
    assert result.exit_code == 1
    assert f"{bad}, column 'std_delta': missing column 'std_delta' (the released per-cell schema)" in result.output
    bad.write_text("target_bias,human_bias,n,mean_delta,std_delta\nAnchoring,Anchoring,0.5,0.1,0.2\n",
                   encoding="utf-8")
    result = CliRunner().invoke(main, ["score", "--cells", str(bad)])
    assert result.exit_code == 1
    assert f"{bad}, row 2, column 'n': '0.5' is not a whole number" in result.output
    both = CliRunner().invoke(main, ["score", "--cells", str(bad), "--counts", str(bad)])
    assert both.exit_code == 2 and "give one of RUN_DIR..., --counts FILE.csv or --cells FILE.csv" in both.output


def _score_choosing_originals(folder: Path, reverse: str) -> pd.DataFrame:
    """Compile with `reverse`, answer each row with a fixed original option, score; the rows frame."""
    shutil.copytree(SPEC.parent / "data", folder / "data")
    spec = folder / "cognitive_bias.spec"
    protocol = "protocol authors extract extract_option"
    spec.write_text(SPEC.read_text(encoding="utf-8").replace(protocol, f"{protocol}\n  {reverse}"), encoding="utf-8")
    compile_file(spec, folder / "suite")
    lines = []
    for row in suite_rows(folder / "suite"):
        cell = row["cell"]
        original = hashlib.sha256(f"{cell['unit']}|{cell['human_bias']}|{cell['condition']}|{cell['arm']}".encode())
        index = str(original.digest()[0] % len(row["answers"]))
        token = next(t for t, i in row["answers"].items() if i == index)
        lines.append(json.dumps({"item_id": row["id"], "sample": 0, "model": "m", "params": {}, "answer": token,
                                  "outcome": index}))
    run = folder / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    digest = hashlib.sha256((folder / "suite" / "manifest.json").read_bytes()).hexdigest()
    (run / "run.json").write_text(json.dumps({"suite_dir": str(folder / "suite"), "suite_manifest_sha256": digest,
                                              "model": "m", "mode": "sample", "settings": {}, "planned": 154,
                                              "started": "2026-01-01T00:00:00+00:00", "done": 154, "failed": 0}))
    assert CliRunner().invoke(main, ["score", str(run)]).exit_code == 0
    return pd.read_csv(run / "score" / "rows.csv").sort_values("bank_row").reset_index(drop=True)


def test_scores_are_invariant_to_option_reversal(tmp_path: Path) -> None:
    never = _score_choosing_originals(tmp_path / "never", "reverse 0")
    always = _score_choosing_originals(tmp_path / "always", "reverse 1 by unit, arm")
    assert {r["cell"]["reversed"] for r in suite_rows(tmp_path / "always" / "suite")} == {1}
    assert {r["cell"]["reversed"] for r in suite_rows(tmp_path / "never" / "suite")} == {0}
    columns = ["m_zero_shot", "m_neutral_turn", "m_biased_turn", "presence", "content", "total"]
    pd.testing.assert_frame_equal(never[columns], always[columns])


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.SingularMatrixWarning")
def test_lmm_csv_holds_the_releases_per_target_bias_mixed_model(scored: tuple[Path, list[dict[str, Any]]]) -> None:
    import statsmodels.formula.api as smf

    out, _ = scored
    table = pd.read_csv(out / "lmm.csv", dtype={"note": str}).fillna({"note": ""})
    assert list(table.columns[:3]) == ["target_bias", "lmm_coef", "lmm_p"]  # the released schema first
    order = json.loads((out / "summary.json").read_text())["matrix_order"]
    assert list(table["target_bias"]) == order
    rows = pd.read_csv(out / "rows.csv")
    for record in table.itertuples():
        data = rows.loc[rows["target"] == record.target_bias, ["content", "human", "unit"]].dropna()
        if len(data) < 5 or data["human"].nunique() < 2 or data["content"].nunique() < 2:
            assert math.isnan(record.lmm_coef) and record.note, record
            continue
        data = data.assign(hb_code=pd.Categorical(data["human"]).codes.astype(float))
        try:
            direct = smf.mixedlm("content ~ hb_code", data, groups=data["unit"]).fit(reml=True, method="lbfgs")
        except np.linalg.LinAlgError:  # statsmodels cannot fit it either: absent, with the reason
            assert math.isnan(record.lmm_coef) and record.note.startswith("the mixed model failed"), record
            continue
        assert record.lmm_coef == pytest.approx(direct.params["hb_code"], rel=1e-9, abs=1e-12)
    assert set(table.loc[table["target_bias"] == "Status Quo Bias", "note"]) == {"fewer than 5 scored rows"}


FIX = "; recompile the suite from its spec or get it from its author\n"


def _hostile(scored: tuple[Path, list[dict[str, Any]]], tmp_path: Path, change: Any) -> tuple[Path, str]:
    """A copy of the scored suite whose manifest.analysis `change` edited, run and scored; (suite, output)."""
    suite = tmp_path / "suite"
    shutil.copytree(scored[0].parent.parent / "suite", suite)
    manifest = json.loads((suite / "manifest.json").read_text())
    change(manifest["analysis"])
    (suite / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    rows = scored[1]
    (run / "results.jsonl").write_text("".join(json.dumps(
        {"item_id": r["id"], "sample": 0, "model": "m", "params": {}, "response": "1", "answer": "1",
         "outcome": r["answers"]["1"]}) + "\n" for r in rows), encoding="utf-8")
    digest = hashlib.sha256((suite / "manifest.json").read_bytes()).hexdigest()
    (run / "run.json").write_text(json.dumps({
        "suite_dir": str(suite), "suite_manifest_sha256": digest, "model": "m", "mode": "sample", "settings": {},
        "started": "t", "planned": len(rows), "done": len(rows), "failed": 0}), encoding="utf-8")
    result = CliRunner().invoke(main, ["score", str(run)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert not (run / "score").exists()
    return suite, result.output


@pytest.mark.parametrize(("change", "problem"), [
    (lambda a: a.update(arms=["control", "control"]), "analysis: arm 'control' is listed twice"),
    (lambda a: a["matrix_order"].append("Anchoring"), "analysis: bias of matrix_order 'Anchoring' is listed twice"),
    (lambda a: a["psm_covariates"].append("sim_sentiment"), "analysis: psm covariate 'sim_sentiment' is listed twice"),
])
def test_a_bias_record_naming_a_thing_twice_is_refused(scored: tuple[Path, list[dict[str, Any]]], tmp_path: Path,
                                                       change: Any, problem: str) -> None:
    suite, output = _hostile(scored, tmp_path, change)
    assert output == f"Error: {suite / 'manifest.json'}: {problem}{FIX}"


@pytest.mark.parametrize(("change", "problem", "wrong"), [
    (lambda a: a.update(arms=["control", "placebo"]), "arm 'treatment' is not one of manifest.json's analysis "
                                                      "(control, placebo)", lambda r: r["cell"]["arm"] == "treatment"),
    (lambda a: a["matrix_order"].remove("Anchoring"), "target_bias 'Anchoring' is not one of manifest.json's "
     "analysis (Availability Heuristic, Bandwagon Effect, Confirmation Bias, Framing Effect, In Group Bias, Loss "
     "Aversion, Planning Fallacy, Status Quo Bias)", lambda r: r["cell"]["target_bias"] == "Anchoring"),
    (lambda a: a["scm_covariates"].append("income"), "its meta has no covariate 'income', which manifest.json's "
     "analysis lists", lambda r: r["cell"]["human_bias"] is not None),
])
def test_a_bias_record_its_rows_contradict_is_a_located_error(scored: tuple[Path, list[dict[str, Any]]],
                                                              tmp_path: Path, change: Any, problem: str,
                                                              wrong: Any) -> None:
    suite, output = _hostile(scored, tmp_path, change)
    line, row = next((number, row) for number, row in enumerate(scored[1], start=1) if wrong(row))
    assert output == f"Error: {suite / 'suite.jsonl'}:{line}: row {row['id']}: {problem}{FIX}"


def test_several_models_get_paired_t_tests_on_table_1s_effects(scored: tuple[Path, list[dict[str, Any]]],
                                                                 tmp_path: Path) -> None:
    score_dir, rows = scored
    suite = score_dir.parent.parent / "suite"
    odd = next(r["meta"]["bank_row"] for r in rows if (r.get("meta") or {}).get("bank_row"))

    def other(row: dict[str, Any]) -> str | None:  # another deterministic spread of the displayed options
        return str(1 + hashlib.sha256(row["id"].encode()).digest()[5] % len(row["answers"]))

    def almost(row: dict[str, Any]) -> str | None:  # n's answers but on one bank row of 53
        moved = str(1 + int(str(other(row))) % len(row["answers"]))
        return moved if (row.get("meta") or {}).get("bank_row") == odd else other(row)

    runs = []
    for model, pick in (("m", _answer), ("n", other), ("o", almost)):  # scored together only
        runs.append(tmp_path / model)
        _write_run(runs[-1], suite, rows, pick, model)
    run = tmp_path
    result = CliRunner().invoke(main, ["score", *map(str, runs), "-o", str(run / "score")])
    assert result.exit_code == 0 and result.exception is None, result.output
    summary = json.loads((run / "score" / "summary.json").read_text())
    found = {(r["statistic"].split(" ")[0], r["model_a"], r["model_b"]): r for r in summary["comparisons"]["rows"]}
    assert len(found) == 9 and pd.read_csv(run / "score" / "comparisons.csv").shape[0] == 9
    table1 = pd.read_csv(run / "score" / "effects.csv").set_index(["model", "quantity"])["mean"]
    table = pd.read_csv(run / "score" / "rows.csv")
    for effect, symbol in (("presence", "Δn"), ("content", "δ"), ("total", "Δb")):
        # each model's own Table 1 mean (m abstains on some rows, n on none)
        differ = found[(symbol, "m", "n")]
        assert differ["difference"] == pytest.approx(table1[("m", effect)] - table1[("n", effect)])
        assert differ["low"] < differ["difference"] < differ["high"] and differ["clusters"] == 53
        # n and o scored every row and differ on one bank row's biased turn: the paired t test, never told
        # apart; the presence effect (the unit's shared turns) is the same for both: nothing to test
        paired = found[(symbol, "n", "o")]
        if effect == "presence":
            assert (paired["difference"], paired["tied"]) == (0.0, None)
            continue
        wide = table.pivot_table(index=["unit", "bank_row"], columns="model", values=effect)
        golden = stats.ttest_rel(wide["n"], wide["o"])
        assert paired["difference"] / paired["se"] == pytest.approx(golden.statistic)
        assert paired["p"] == pytest.approx(golden.pvalue) and paired["tied"] is True
    reported = CliRunner().invoke(main, ["report", str(run / "score")])
    assert reported.exit_code == 0 and reported.exception is None, reported.output
    assert "Paired model comparisons" in (run / "score" / "report.md").read_text()
