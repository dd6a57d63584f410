"""Parse a model's reply into one of the row's valid answer tokens (strict first, then tolerant forms), a
reasoned reply's last line ("Answer: A") into its token, a judge's JSON reply into its label and reason,
an extraction call's reply into an option number, and the fields a row's readers record ("Confidence: 80")."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache

from spec_audits.contract.suite_model import Reader

# Markdown emphasis, quotes and brackets that models wrap around a bare answer.
_WRAPPERS = "*_`\"'()[]{}<>"
_TRAILING = ".,;:!?"
_LEAD_INS = (
    r"(?:final\s+)?answer\s*(?:is)?\s*[:\-]?",
    r"(?:my\s+)?(?:choice|selection|pick)\s*(?:is)?\s*[:\-]?",
    r"i\s+(?:would\s+|will\s+|'d\s+)?(?:choose|pick|select|prefer|go\s+with)",
    r"(?:label|classification|category)\s*(?:is)?\s*[:\-]?",
    r"option",
)
# Seed 004's authors read the extraction call's reply with this pattern (the first match counts), in
# core/base.py of github.com/sachininw/LLM_Conditional_Biases @ c8fb05f.
OPTION_NUMBER = re.compile(r"\b(?:[oO]ption) (\d+)\b")
# A JSON reply wrapped in a markdown code fence, as chat models often write it.
_FENCE = re.compile(r"```(?:json)?[ \t]*\n?(?P<body>.*?)\n?[ \t]*```", re.DOTALL | re.IGNORECASE)


def _bare(text: str) -> str:
    text = text.strip()
    prev = None
    while prev != text:
        prev = text
        text = text.strip().strip(_WRAPPERS).rstrip(_TRAILING).strip()
    return text


@lru_cache(maxsize=4096)
def _tolerant_patterns(tokens: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(token after a lead-in such as "I choose", token opening the reply as in "A) coffee")."""
    alternatives = "|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True))
    lead = "|".join(_LEAD_INS)
    token = rf"[*_`\"'(\[]*(?P<tok>{alternatives})[*_`\"')\]]*"
    after_lead = re.compile(rf"\b(?:{lead})\s*(?:option\s*)?{token}(?=$|[\s.,;:!?)])", re.IGNORECASE)
    opening = re.compile(rf"^{token}\s*[.):\-]", re.IGNORECASE)
    return after_lead, opening


def _casefold_lookup(tokens: tuple[str, ...]) -> dict[str, str] | None:
    """Folded token -> token, or None when folding would make two tokens collide."""
    folded = {t.casefold(): t for t in tokens}
    return folded if len(folded) == len(tokens) else None


def parse_answer(text: str | None, tokens: tuple[str, ...]) -> str | None:
    """The valid token `text` gives, or None (an abstention).

    Strict: the reply is exactly a token. Tolerant: the token wrapped in markdown or punctuation
    ("**A**", "A."), or introduced as "Option A", "Answer: A", "I choose A", or leading "A) ...".
    A reply naming more than one distinct token is an abstention."""
    if text is None:
        return None
    if text.strip() in tokens:
        return text.strip()
    bare = _bare(text)
    if bare in tokens:
        return bare
    folded = _casefold_lookup(tokens)
    if folded is None:
        return None
    if bare.casefold() in folded:
        return folded[bare.casefold()]
    matches = [m for pattern in _tolerant_patterns(tokens) for m in pattern.finditer(text.strip())]
    found = {folded[m.group("tok").casefold()] for m in matches}
    return found.pop() if len(found) == 1 else None


def parse_answer_line(text: str | None, tokens: tuple[str, ...], prefix: str) -> str | None:
    """The token a reasoned reply gives on its last non-empty line, written `<prefix> <token>` (e.g.
    "Answer: B"), or None. The prefix is matched without regard to case; markdown, quotes and a trailing
    full stop around the line or the token are allowed ("**Answer: B**", '"Answer: B".'). Reasoning
    before that line may name any option: only the last line counts."""
    if text is None:
        return None
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    line = _bare(lines[-1])
    if not line.casefold().startswith(prefix.casefold()):
        return None
    answer = _bare(line[len(prefix):])
    return answer if answer in tokens else None


def parse_judge_json(text: str | None, labels: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(label, reason) of a judge's JSON reply `{"label": ..., "reason": ...}`, alone or in one ```json
    fence; (None, None) when the reply is no JSON object or its label is not exactly one of `labels`.
    A reason that is absent or not a string is None."""
    if text is None:
        return None, None
    body = text.strip()
    fenced = _FENCE.fullmatch(body)
    try:
        found = json.loads(fenced.group("body") if fenced else body)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the decoder's limit
        return None, None
    label = found.get("label") if isinstance(found, dict) else None
    if not isinstance(label, str) or label.strip() not in labels:
        return None, None
    reason = found.get("reason")
    return label.strip(), reason if isinstance(reason, str) else None


def parse_option_number(text: str | None, tokens: tuple[str, ...]) -> str | None:
    """The answer token an extraction reply names: the number of the first "Option N" / "option N", as
    the authors read it (int("03") is 3), or None when there is none or it is not a displayed option."""
    match = OPTION_NUMBER.search(text or "")
    number = str(int(match.group(1))) if match else None
    return number if number in tokens else None


EXTRACTION_FORMS = {"option_number": "Option {}"}  # the well-formed reply per answer token, by Extraction.parse
EXTRACTION_PARSERS = {"option_number": parse_option_number}


_VALUES = {"int": re.compile(r"[-+]?\d+(?![\d.])"), "number": re.compile(r"[-+]?\d+(?:\.\d+)?"),
           "word": re.compile(r"[\w-]+")}


def read_fields(text: str | None, readers: Sequence[Reader]) -> dict[str, int | float | str | None]:
    """Each reader's value in the reply: what follows its label's last occurrence (case ignored, markdown
    emphasis and spaces skipped), or None when that is not of its kind or lies outside its bounds."""
    return {reader.name: _field(text or "", reader) for reader in readers}


def _field(text: str, reader: Reader) -> int | float | str | None:
    at = text.casefold().rfind(reader.after.casefold())
    if at < 0:
        return None
    rest = text[at + len(reader.after):].lstrip(" \t*_`")
    found = _VALUES[reader.kind].match(rest)
    if found is None:
        return None
    if reader.kind == "word":
        return found.group()
    value = int(found.group()) if reader.kind == "int" else float(found.group())
    inside = (reader.low is None or value >= reader.low) and (reader.high is None or value <= reader.high)
    return value if inside else None
