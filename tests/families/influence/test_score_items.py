"""An items design (data rows as stimuli) run on the stub server and scored: one condition per level."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from click.testing import CliRunner, Result

from spec_audits.cli import main
from spec_audits.compiler.dispatch.build import compile_file
from tests.stub_server import StubServer

DATA = "id,situation,a,b,va,vb\n1,Stay or go?,Stay,Go,calm,zeal\n2,Eat or fast?,Eat,Fast,zeal,calm\n" \
       "3,Run or walk?,Run,Walk,calm,zest\n"
SPEC = """
suite chores "Chores"
seed 4
data choices from "choices.csv" key id map option_A = a, option_B = b, level_A = va, level_B = vb
factor value:
  calm "calm"
  zeal "zeal"
  zest "zest"
template question "{{ item.situation }} A: {{ first.text }} B: {{ second.text }}"
influence nudge append "Think of {{ target.plural }} over {{ other.plural }}."
design main:
  items choices
  factors value
  influences *
  conditions baseline shared, toward A, toward B
  order both
  samples 2 split by order
  answer choice "A" | "B"
  analysis influence_pairs benchmark chores, bootstrap 100, exclude zest
"""


def spec(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def test_items_run_and_score_per_level_without_the_excluded_one(tmp_path: Path) -> None:
    (tmp_path / "choices.csv").write_text(DATA)
    (tmp_path / "chores.spec").write_text(SPEC)
    compile_file(tmp_path / "chores.spec", tmp_path / "suite")
    manifest = json.loads((tmp_path / "suite" / "manifest.json").read_text())
    assert manifest["rows"] == 3 * 2 * 2 * 3  # items x orientations x orders x (baseline + 2 directions)
    server = StubServer()
    api_base = server.start()
    try:
        result = spec("run", tmp_path / "suite", "--model", "openai/stub", "--api-base", api_base,
                      "--out", tmp_path / "run", "--no-progress")
    finally:
        server.stop()
    assert result.exit_code == 0, result.output
    assert spec("score", tmp_path / "run").exit_code == 0
    conds = pd.read_csv(tmp_path / "run" / "score" / "conditions.csv").set_index("factor")
    assert sorted(conds.index) == ["calm", "zeal"]  # zest is excluded by the analysis
    assert (conds["group_B"] == "other").all()
    assert conds.loc["calm", ["n_0", "n_A", "n_B"]].tolist() == [6, 6, 6]  # 3 items x 2 orders x 1 sample
    assert conds.loc["zeal", ["n_0", "n_A", "n_B"]].tolist() == [4, 4, 4]
    flips = pd.read_csv(tmp_path / "run" / "score" / "flips.csv")
    assert set(flips["factor"]) == {"calm", "zeal"} and flips["n_flip"].le(3).all()
