"""Tests of the puzzle-solving family (families/puzzle_solving/)."""

from __future__ import annotations

from pathlib import Path

TINY = '''suite tiny "Tiny puzzle solving"
seed 3
puzzle PUZZLE:  # named as the docs table writes the form
  kind propositional
  people A, B, C, D
  attribute gender from man, woman pick 2
  attribute race from Asian, Black pick 2
  shape canonical: A = G1 R1, B = G1 R2, C = G2 R1, D = G2 R2
  bands easy <= 2, hard > 2
puzzle row:
  kind zebra
  people 1, 2, 3
  attribute height from tall, short, average pick 3
  attribute mood from happy, tired, calm pick 3
  bands easy <= 1, intermediate > 1
template solve """
{{ puzzle.domain_text }}
{% for clue in puzzle.text %}- {{ clue }}
{% endfor %}Give the solution as {{ format }}.
"""
design logic:
  analysis puzzle_solving
  answer solution PUZZLE
  count 2 per band
  prompt solve
  decode temperature 0, max_tokens 60
design rows:
  analysis puzzle_solving
  answer solution row
  count 2 per band seed 5
  prompt solve
  decode temperature 0, max_tokens 60
'''


def tiny(folder: Path) -> Path:
    path = folder / "tiny.spec"
    path.write_text(TINY, encoding="utf-8")
    return path


# tests/families/test_accepts_table.py: (writes the family's example spec into a folder, the answer form it
# writes, the text around it with FORM marking the form)
ACCEPTS_EXAMPLE = (tiny, "solution PUZZLE", "answer FORM\n  count 2 per band\n  prompt solve\n  decode temperature 0, "
                   "max_tokens 60\ndesign rows")
