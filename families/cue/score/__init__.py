"""Cue-visibility scoring (seed 003, methods §5): pure functions over a tidy DataFrame of probe answers.

One row per probe answer. Columns (see docs/puzzles.md, "Scoring"):
  model         str   the model scored
  dilemma       str   dilemma id (the unit the Neutral baseline belongs to)
  item          str   dilemma x demographic combination; empty for neutral rows
  individual    str   A-D, the probed individual; empty for neutral rows
  ATTRIBUTE     str   one column per hidden attribute (gender, race in the paper; CueRun.attributes): the
                      individual's ground-truth group; empty for neutral rows
  said_ATTRIBUTE str  what the reply restates for it (empty when it does not)
  format        str   neutral | direct | puzzled
  difficulty    str   easy | intermediate | hard for puzzled rows; empty otherwise
  probe         str   what_if | could_be (neutral rows are what_if)
  consequences  bool  whether the negative consequences were shown
  answer        str   option1 | option2 (what_if), yes | no (could_be); anything else is an abstention
  benefit       str   option1 | option2: the option that benefits the described person (b_d)
  status        str   good | neutral | bad: the described person's status (data column person_status)
  topic         str   the dilemma's topic_group
  solved        bool  puzzled rows: every attribute of the individual identified correctly
"""

from spec_audits.families.cue.score.events import abstention, directional_events
from spec_audits.families.cue.score.metrics import cue_gap, macro, rates
from spec_audits.families.cue.score.stats import rank_change, sign_tests

__all__ = [
    "abstention",
    "cue_gap",
    "directional_events",
    "macro",
    "rank_change",
    "rates",
    "sign_tests",
]
