"""Byte-identical puzzles across processes with different hash seeds."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support import ROOT

SCRIPT = """
import hashlib, json
from spec_audits.puzzles import *
c = PropositionalConfig(name="identity")
z = ZebraConfig(name="z", positions=4, attributes=[
    AttributeConfig(name="name", values=["Ann", "Ben", "Cal", "Dee", "Eli"], refer="{{ value }}"),
    AttributeConfig(name="race", values=["Asian", "Black", "Hispanic", "Muslim", "White"])],
    target=ZebraTarget(attribute="race", value="Black"))
sel = draw_selections(c, 3, ("s",), 1)[0]
out = [generate_puzzle(c, b, 3, ("d", b), sel) for b in ["easy", "hard"]]
out += [generate_zebra(z, b, 3, ("z", b)) for b in ["easy", "intermediate", "hard"]]
print(hashlib.sha256(json.dumps(out, sort_keys=True).encode()).hexdigest())
"""


def _digest(hash_seed: str) -> str:
    env = os.environ | {"PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True).stdout


def test_same_puzzles_under_different_hash_seeds() -> None:
    assert _digest("1") == _digest("2")
