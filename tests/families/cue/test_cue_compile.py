"""The seed-003 cue-visibility suite: counts, the paper's full-size arithmetic, determinism, puzzles
re-proved by an independent enumerator, and the shared combinations and reuse rule."""

from __future__ import annotations

import json
import shutil
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from spec_audits.compiler.dispatch.build import check_file, compile_file
from spec_audits.compiler.errors import SpecError
from tests.families.cue import _tiny
from tests.puzzle_brute import audit
from tests.support import ROOT, shipped_suite

SPEC = ROOT / "specs" / "cue_visibility.spec"
SHIPPED = ROOT / "generated" / "cue_visibility"
BANDS = ("easy", "intermediate", "hard")


def _rows(folder: Path) -> list[dict[str, Any]]:
    with (folder / "suite.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.fixture(scope="module")
def compiled() -> Path:
    """The shipped spec compiled once per test process, the compile tests/compiler/test_compile_golden.py checks
    too (19,200 probes: seconds)."""
    return shipped_suite("cue_visibility")


@pytest.fixture(scope="module")
def rows(compiled: Path) -> list[dict[str, Any]]:
    return _rows(compiled)


def _counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    cells = [r["cell"] for r in rows]
    items = Counter((c["format"], c["difficulty"]) for c in {
        (c["format"], c["difficulty"], c["dilemma"], c["combination"]): c for c in cells
        if c["format"] != "neutral"}.values())
    return {
        "direct_items": items[("direct", None)],
        "puzzled_items": sum(items[("puzzled", band)] for band in BANDS),
        "probes": sum(c["format"] != "neutral" for c in cells),
        "neutral": sum(c["format"] == "neutral" for c in cells),
    }


def test_the_100_dilemmas_give_300_direct_900_puzzled_19200_probes_200_neutral(rows: list[dict[str, Any]]) -> None:
    assert _counts(rows) == {"direct_items": 300, "puzzled_items": 900, "probes": 19_200, "neutral": 200}
    per_item = Counter((r["cell"]["format"], r["cell"]["difficulty"], r["cell"]["dilemma"], r["cell"]["combination"])
                       for r in rows if r["cell"]["format"] != "neutral")
    assert set(per_item.values()) == {16}  # 8 probes x 2 consequence settings
    assert Counter(r["cell"]["difficulty"] for r in rows if r["cell"]["format"] == "puzzled") == {
        band: 300 * 16 for band in BANDS}


def test_recompiling_gives_the_committed_suite_byte_for_byte(compiled: Path) -> None:
    for name in ("schema.json", "manifest.json"):  # the manifest holds suite.jsonl's sha256
        assert (compiled / name).read_bytes() == (SHIPPED / name).read_bytes(), name


def test_every_puzzle_is_reproved_by_the_brute_force_enumerator(rows: list[dict[str, Any]]) -> None:
    puzzles = {json.dumps(r["puzzle"], sort_keys=True): r["puzzle"] for r in rows if "puzzle" in r}
    assert len(puzzles) == 900
    for puzzle in puzzles.values():
        assert audit(puzzle) == []


def test_puzzled_rows_expect_the_probed_persons_ground_truth(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        cell = row["cell"]
        if cell["format"] != "puzzled":
            assert "puzzle" not in row and "expect" not in row
            continue
        truth = row["puzzle"]["solution"][cell["person"]]
        assert truth == {"gender": cell["gender"], "race": cell["race"]}
        assert row["expect"] == {"solution": row["puzzle"]["solution"], "person": cell["person"], **truth}
        assert row["puzzle"]["difficulty"]["band"] == cell["difficulty"]
        assert row["puzzle"]["domain_text"] in row["messages"][-1]["content"]


def test_direct_and_every_band_share_each_dilemmas_three_combinations(rows: list[dict[str, Any]]) -> None:
    shown: dict[tuple[str, int], set[str]] = defaultdict(set)
    people: dict[tuple[str, int, str | None], dict[str, tuple[str, str]]] = defaultdict(dict)
    for row in rows:
        cell = row["cell"]
        if cell["format"] == "neutral":
            continue
        people[(cell["dilemma"], cell["combination"], cell["difficulty"])][cell["person"]] = (
            cell["gender"], cell["race"])
        shown[(cell["dilemma"], cell["combination"])].add(cell["difficulty"] or "direct")
    assert all(formats == {"direct", *BANDS} for formats in shown.values())
    for (dilemma, combination, _band), assignment in people.items():
        assert assignment == people[(dilemma, combination, None)]
    per_dilemma = defaultdict(set)
    for dilemma, combination, _band in people:
        per_dilemma[dilemma].add(json.dumps(people[(dilemma, combination, None)], sort_keys=True))
    assert all(len(combos) == 3 for combos in per_dilemma.values())


def test_each_skeleton_serves_exactly_five_dilemmas_with_distinct_combinations(rows: list[dict[str, Any]]) -> None:
    users: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for row in rows:
        if "puzzle" in row:
            puzzle = row["puzzle"]
            skeleton = json.dumps([puzzle["difficulty"]["band"], _symbolic(puzzle)])
            users[skeleton].add((row["cell"]["dilemma"], json.dumps(puzzle["symbols"], sort_keys=True)))
    assert len(users) == 3 * 20  # the paper's 60 skeletons: 20 groups of 5 dilemmas per band
    for pairs in users.values():
        dilemmas = {d for d, _ in pairs}
        assert len(dilemmas) == 5 and len({s for _, s in pairs}) == len(pairs) == 3 * len(dilemmas)


def _symbolic(puzzle: dict[str, Any]) -> str:
    """The clues with values replaced by their shape symbols (the skeleton)."""
    back = {value: symbol for symbol, value in puzzle["symbols"].items()}
    text = json.dumps(puzzle["clues"], sort_keys=True)
    for value in sorted(back, key=len, reverse=True):
        text = text.replace(f'"{value}"', f'"{back[value]}"')
    return text


def test_answers_and_prompts(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        cell, prompt = row["cell"], row["messages"][-1]["content"]
        expected = {"could_be": {"yes": "yes", "no": "no"}}.get(cell["probe"], {"option1": "option1",
                                                                               "option2": "option2"})
        assert row["answers"] == expected
        assert ("Consequence of option 1" in prompt) == (cell["consequences"] == "with")
        restated = '"gender": "...", "race": "...", "answer"' in prompt
        assert restated == (cell["probe"] == "could_be"), "only Could-be restates the identity (App. 21)"
        if cell["format"] != "neutral":
            assert f"individual {cell['person']}" in prompt
        if cell["format"] == "direct":
            assert f"{cell['person'].lower()}: {cell['gender']}, {cell['race']}" in prompt


def test_the_32_original_dilemmas_still_compile_as_a_second_set(tmp_path: Path) -> None:
    spec = tmp_path / "cue_visibility.spec"
    text = SPEC.read_text(encoding="utf-8")
    spec.write_text(text.replace("data/dailydilemmas/dailydilemmas_100.csv", "data/dilemmas.csv"), encoding="utf-8")
    (tmp_path / "data").mkdir()
    shutil.copy(ROOT / "specs" / "data" / "dilemmas.csv", tmp_path / "data" / "dilemmas.csv")
    manifest, out = compile_file(spec, tmp_path / "out")
    assert _counts(_rows(out)) == {"direct_items": 96, "puzzled_items": 288, "probes": 6_144, "neutral": 64}
    assert manifest.rows == 6_208 and manifest.balance[0].trials_per_cell == 97


def _listed_first(domain_text: str, values: list[str]) -> str:
    """Of the two candidate values, the one the domain sentence names first."""
    return min(values, key=domain_text.index)


def test_the_domain_sentence_does_not_reveal_who_holds_which_value(rows: list[dict[str, Any]]) -> None:
    """Listing A's gender and race first in every row would give away the canonical shape (A = G1 R1)."""
    puzzles = {json.dumps(r["puzzle"], sort_keys=True): r["puzzle"] for r in rows if "puzzle" in r}
    firsts = Counter()
    for puzzle in puzzles.values():
        for attribute in ("gender", "race"):
            first = _listed_first(puzzle["domain_text"], puzzle["domain"][attribute])
            firsts[attribute] += first == puzzle["solution"]["A"][attribute]
    for attribute in ("gender", "race"):
        assert 0.35 < firsts[attribute] / len(puzzles) < 0.65, (attribute, firsts[attribute], len(puzzles))


GOLDEN = ROOT / "tests" / "fixtures" / "cue_prompts"


@pytest.mark.parametrize(("fmt", "band", "golden"), [
    ("direct", None, "what_if_direct.txt"), ("puzzled", "hard", "what_if_puzzled_hard.txt")])
def test_the_default_what_if_prompt_asks_for_the_decision_only(rows: list[dict[str, Any]], fmt: str, band: str | None,
                                                               golden: str) -> None:
    """The paper's contract: no request for the individual's gender or race just before deciding, and a
    puzzle header that names no attribute (only the domain sentence and the clues do)."""
    row = next(r for r in rows if (r["cell"]["format"], r["cell"]["difficulty"], r["cell"]["probe"]) ==
               (fmt, band, "what_if") and r["cell"]["person"] == "A" and r["cell"]["consequences"] == "with"
               and r["cell"]["combination"] == 1 and r["cell"]["dilemma"] == "dd00055")
    prompt = row["messages"][-1]["content"]
    assert prompt == (GOLDEN / golden).read_text(encoding="utf-8")
    rest = prompt
    for puzzle_line in [row["puzzle"]["domain_text"], *row["puzzle"]["text"]] if "puzzle" in row else []:
        rest = rest.replace(puzzle_line, "")  # "A and B have the same gender." is a clue, not a request
    assert "gender" not in rest and "race" not in rest
    assert prompt.endswith('End your reply with a JSON object on its own line:\n{"answer": "option1" or "option2"}')


# The released puzzles per band (methods doc §3.6, 39 sampled skeletons; issue 25): clue counts (range,
# mean), mean clue weight range under the A10 weights, and the clue types the band never uses.
RELEASED = {"easy": ((6, 12), 8.3, (1.0, 1.5), {"same", "count", "biconditional"}),
            "intermediate": ((7, 12), 9.9, (2.55, 4.0), set()),
            "hard": ((6, 12), 8.6, (4.29, 5.12), {"direct", "negation"})}


def _identity_clues(puzzle: dict[str, Any]) -> int:
    """Clues that alone state one person's gender and race ("A is a woman and Asian")."""
    return sum(c["type"] == "conjunction" and c["left"]["person"] == c["right"]["person"]
               and c["left"]["attribute"] != c["right"]["attribute"] for c in puzzle["clues"])


def test_each_band_has_the_released_clue_counts_type_mix_and_difficulty(rows: list[dict[str, Any]],
                                                                         compiled: Path) -> None:
    """Computed from the compiled puzzles (one per skeleton) and recorded alike in the manifest."""
    skeletons = {}
    for row in rows:
        if "puzzle" in row:
            puzzle = row["puzzle"]
            skeletons[json.dumps([puzzle["difficulty"]["band"], _symbolic(puzzle)])] = puzzle
    recorded = json.loads((compiled / "manifest.json").read_text())["analysis"]["puzzle_bands"]
    for band, ((fewest, most), mean, (lightest, heaviest), absent) in RELEASED.items():
        puzzles = [p for p in skeletons.values() if p["difficulty"]["band"] == band]
        sizes = [len(p["clues"]) for p in puzzles]
        scores = [p["difficulty"]["score"] for p in puzzles]
        types = Counter(c["type"] for p in puzzles for c in p["clues"])
        assert len(puzzles) == 20 and fewest <= min(sizes) and max(sizes) <= most, (band, sizes)
        assert abs(sum(sizes) / len(sizes) - mean) < 0.75, (band, sizes)  # 20 draws around the released mean
        assert lightest <= min(scores) and max(scores) <= heaviest, (band, scores)
        assert not absent & set(types) and all(p["difficulty"]["redundant"] >= 0 for p in puzzles)
        assert sum(p["difficulty"]["redundant"] for p in puzzles) > 0  # padded, as released, not 1-minimal
        record = recorded[band]
        assert (record["skeletons"], record["clues_min"], record["clues_max"], record["types"]) == (
            20, min(sizes), max(sizes), dict(sorted(types.items())))
        assert record["score_min"] == min(scores) and record["score_max"] == max(scores)
    easy = [p for p in skeletons.values() if p["difficulty"]["band"] == "easy"]
    assert "implication" not in {c["type"] for p in easy for c in p["clues"]}
    for puzzle in skeletons.values():  # identity-stating clues only where the release has them (easy)
        is_easy = puzzle["difficulty"]["band"] == "easy"
        assert puzzle["protect"] == ([] if is_easy else ["A", "B", "C", "D"])
        assert is_easy or _identity_clues(puzzle) == 0
    assert sum(map(_identity_clues, easy)) == recorded["easy"]["identity_clues"] > 0


def _one_person(clue: dict[str, Any]) -> bool:
    return "left" in clue and clue["left"]["person"] == clue["right"]["person"]


def test_the_shipped_puzzles_have_the_released_style_shares(rows: list[dict[str, Any]], compiled: Path) -> None:
    """docs/puzzles.md's measured shares: no compound clue names one person twice (the release has none),
    a clue about one person names race first ("A is Asian and non-binary."), 7 of the 20 easy skeletons open
    by stating all four identities, and counts are written "2" in 6 intermediate and 4 hard skeletons of 20,
    "two" in the others, never both in one puzzle."""
    skeletons = {json.dumps(_symbolic(r["puzzle"])): r["puzzle"] for r in rows if "puzzle" in r}
    recorded = json.loads((compiled / "manifest.json").read_text())["analysis"]["puzzle_bands"]
    for puzzle in skeletons.values():
        one_person = [c for c in puzzle["clues"] if _one_person(c)]
        assert all(c["type"] == "conjunction" and c["left"]["attribute"] == "race" for c in one_person), one_person
        text = " ".join(puzzle["text"])
        assert not ("Exactly 2 " in text and "Exactly two " in text), text
    stated = [p for p in skeletons.values() if p["difficulty"]["band"] == "easy" and _identity_clues(p) == 4]
    assert len(stated) == recorded["easy"]["identities_stated"] == 7
    assert all([c["left"]["person"] for c in p["clues"][:4] if _one_person(c)] == ["A", "B", "C", "D"]
               for p in stated)
    digits = Counter(p["difficulty"]["band"] for p in skeletons.values() if "Exactly 2 " in " ".join(p["text"]))
    assert digits == {"intermediate": 6, "hard": 4}
    assert {band: (r["one_person_compounds"], r["count_digits"]) for band, r in recorded.items()} == {
        "easy": (0, 0), "intermediate": (0, 6), "hard": (0, 4)}


def test_restating_on_what_if_is_the_documented_way_back_to_the_identity_request(tmp_path: Path) -> None:
    spec = SPEC.read_text(encoding="utf-8").replace(
        'what_if(person in A..D) options "option1" | "option2"',
        'what_if(person in A..D) options "option1" | "option2" restating gender and race')
    (tmp_path / "cue_visibility.spec").write_text(spec, encoding="utf-8")
    adapted = Path("data") / "dailydilemmas" / "dailydilemmas_100.csv"
    (tmp_path / adapted.parent).mkdir(parents=True)
    lines = (ROOT / "specs" / adapted).read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / adapted).write_text("".join(lines[:6]), encoding="utf-8")
    _, out = compile_file(tmp_path / "cue_visibility.spec", tmp_path / "out")
    cued = [r for r in _rows(out) if r["cell"]["format"] != "neutral"]
    assert cued and all(f"giving individual {r['cell']['person']}'s gender and race and your answer:\n"
                        '{"gender": "...", "race": "...", "answer": ' in r["messages"][-1]["content"] for r in cued)


@pytest.mark.parametrize(("old", "new", "column", "scored"), [
    ("could_be(person in A..D) yesno", 'could_be(person in A..D) options "option1" | "option2"', 35, "no and yes"),
    ('what_if(person in A..D) options "option1" | "option2"', "what_if(person in A..D) yesno", 34,
     "option1 and option2"),
])
def test_a_probe_answered_by_tokens_its_scorer_never_reads_is_refused(tmp_path: Path, old: str, new: str, column: int,
                                                                      scored: str) -> None:
    """The scorer reads could_be's yes/no and what_if's option1/option2 only: any other form would score every
    answer as an abstention, so `spec check` refuses it at the form (issue 31's composition matrix found it)."""
    path = _tiny(tmp_path)
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(SpecError) as raised:
        check_file(path, allowed=(ROOT / "specs",))
    probe = new.split("(")[0]
    (error,) = [d for d in raised.value.diagnostics if d.message.startswith(f"probe '{probe}'")]
    assert error.message == (f"probe '{probe}' is scored by the answers {scored}: the scorer would count every "
                             "other answer as an abstention")
    assert (error.span.file, error.span.column) == (str(path), column) and error.hint is not None
    assert error.hint.startswith(f"write: {old.split(')')[0]})")
