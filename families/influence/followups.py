"""A design's follow-up turns (`followups NAME, ...`) as its rows carry them.

Each follow-up's text is a template over the row's options, the names its prompt sees (`first`, `second`,
`factor`, and `item` in a design over data items), and `answer`, the first answer, which the runner fills
in when it sends the turn (spec_audits.contract.suite_terms.FOLLOWUP_SLOTS). Its judge's prompt sees `reply` and
`conversation`, both filled in by the runner (checked by the shared checks). A text that reads no name of
the row is rendered once, and every row carries the same entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jinja2 import meta

from spec_audits.sdk import (
    FOLLOWUP_SLOTS,
    JUDGE_SLOTS,
    CompiledText,
    ErrorCollector,
    Record,
    check_render,
    check_slots,
    compile_text,
    environment,
    render_with_slots,
)
from spec_audits.sdk import nodes as n


class FollowUps(Record):
    """The follow-up entries of a design's rows, their texts compiled."""

    entries: tuple[dict[str, Any], ...]
    texts: tuple[CompiledText, ...]
    per_row: bool  # whether a text reads a name of the row

    def for_row(self, context: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The entries of the row whose prompt saw `context`."""
        if not self.per_row:
            return list(self.entries)
        return [{**entry, "content": render_with_slots(text, context, FOLLOWUP_SLOTS)}
                for entry, text in zip(self.entries, self.texts, strict=True)]


def compile_followups(followups: tuple[n.FollowUpDef, ...], names: set[str], sample: Mapping[str, Any],
                      errors: ErrorCollector) -> FollowUps | None:
    """The follow-ups compiled against the row's `names` and rendered once on `sample` (a row's context), so
    a misspelt name or attribute is a located error; None when there are none, or after reporting."""
    if not followups:
        return None
    before = len(errors.diagnostics)
    texts = []
    for follow in followups:
        label = f"follow-up '{follow.name}'"
        text = compile_text(follow.text, label, names | set(FOLLOWUP_SLOTS), errors)
        check_slots(follow.text, label, FOLLOWUP_SLOTS, errors)
        if text is not None and len(errors.diagnostics) == before:
            check_render(text, {**sample, **dict.fromkeys(FOLLOWUP_SLOTS, "")}, errors)
        texts.append(text)
    judges = [_judge_prompt(follow, errors) for follow in followups]
    if len(errors.diagnostics) > before:
        return None
    compiled = tuple(t for t in texts if t is not None)
    per_row = any(_reads_the_row(text, names) for text in compiled)
    entries = tuple(_entry(follow, render_with_slots(text, {}, FOLLOWUP_SLOTS) if not per_row else "", judge)
                    for follow, text, judge in zip(followups, compiled, judges, strict=True))
    return FollowUps(entries, compiled, per_row)


def _reads_the_row(text: CompiledText, names: set[str]) -> bool:
    return bool(meta.find_undeclared_variables(environment().parse(text.text.value)) & names)


def _entry(follow: n.FollowUpDef, content: str, judge_prompt: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": follow.name, "content": content}
    if follow.decode:
        entry["decode"] = {option.name: option.value for option in follow.decode}
    if follow.judge is not None and judge_prompt is not None:
        as_json = follow.judge.reply is not None and follow.judge.reply.name == "json"
        entry["judge"] = {"labels": list(follow.judge.labels), "model": follow.judge.model, "prompt": judge_prompt,
                          **({"reply": "json"} if as_json else {})}  # the bare label, the default, is not recorded
    return entry


def _judge_prompt(follow: n.FollowUpDef, errors: ErrorCollector) -> str | None:
    """The judge's prompt (the default one naming its labels, when it has none) rendered with its run-time
    names kept for the runner; None after reporting (the shared checks report the same mistakes: once)."""
    judge = follow.judge
    if judge is None:
        return None
    if judge.prompt is None:
        return _default_judge_prompt(judge.labels, judge.reply is not None and judge.reply.name == "json")
    label = f"the judge prompt of follow-up '{follow.name}'"
    before = len(errors.diagnostics)
    compiled = compile_text(judge.prompt, label, set(JUDGE_SLOTS), errors)
    check_slots(judge.prompt, label, JUDGE_SLOTS, errors)
    if compiled is None or len(errors.diagnostics) > before:
        return None
    if check_render(compiled, {name: "" for name in JUDGE_SLOTS}, errors) is None:
        return None
    return render_with_slots(compiled, {}, JUDGE_SLOTS)


def _default_judge_prompt(labels: tuple[str, ...], as_json: bool) -> str:
    answer = ('Answer with JSON only: {"label": "<one of the labels>", "reason": "<one sentence>"}' if as_json
              else "Answer with the label only.")
    return f"Classify the reply below into exactly one of the labels {', '.join(labels)}.\n\n" \
        f"Reply:\n{{{{ reply }}}}\n\n{answer}"
