"""A `conversation` played by a design (`conversation NAME` in any design): the conversation block checked
into turns, and every row of the design played through it, the design's own prompt where the block says
`user prompt` and the design's answer the reply to the block's last turn.

    conversation are_you_sure:
      user prompt                                    # the design's prompt (its system text stays first)
      assistant answer first                         # answered like the design's answer (or: its own form,
                                                     #   `answer first choice "A" | "B" decode max_tokens 4`)
      user "I don't think so. Are you sure?" push other
      # the row's answer: the reply to this last user turn, in the design's answer form

A user turn may read an earlier answered turn as `{{ NAME.answer }}`, `{{ NAME.option }}`,
`{{ NAME.other }}` or `{{ NAME.response }}` (spec_audits.contract.suite_terms.TURN_SLOTS), filled in by the
runner, and the row's cell as `{{ cell.KEY }}` (a factor's level: the authority who pushes back), filled in
here; `push` names the option the turn pushes toward (other, same or a token). `assistant generate
model "provider/model"` has another model write the turn. Family-blind: it reads the rows a family made.
"""

from __future__ import annotations

import re
from typing import Any

from spec_audits.base.records import Record
from spec_audits.compiler import nodes as n
from spec_audits.compiler.check import checked_decode
from spec_audits.compiler.errors import Diagnostic, ErrorCollector, Span, SpecError, did_you_mean
from spec_audits.contract.suite_terms import JUDGE_MODEL, PUSHES, TURN_SLOT, TURN_SLOTS

FINAL = "answer"  # the name results and flip statistics give the row's own answer
TURN_FORMS = ("choice", "labels", "options", "yesno")  # an answered turn's own answer forms
UNREAD_FORMS = ("solution",)  # design answer forms an answered turn cannot take (read from more than a token)
_SLOT = TURN_SLOT
CELL = "cell"  # `{{ cell.KEY }}` in a user turn: the row's cell value KEY (e.g. a factor's level), at compile
_CELL = re.compile(r"\{\{\s*cell\.(\w+)\s*\}\}")
_TEMPLATE = re.compile(r"\{\{|\{%|\{#")


class PlayedTurn(Record):
    """One turn as rows carry it: a message (None for the design's prompt), and for an answered turn its name
    and its own answers (None: the design's)."""

    message: dict[str, Any] | None
    answer: str | None = None
    answers: dict[str, str] | None = None
    cells: Span | None = None  # a user turn reading the row's cell ({{ cell.KEY }}): where it is written


class CompiledConversation(Record):
    name: str
    turns: tuple[PlayedTurn, ...]

    def play(self, row: dict[str, Any]) -> dict[str, Any]:
        """The row with its messages played through the conversation: its system turns first, its other
        messages where the conversation says `user prompt`."""
        messages = row["messages"]
        system = next((i for i, m in enumerate(messages) if m["role"] != "system"), len(messages))
        played = list(messages[:system])
        for turn in self.turns:
            if turn.message is None:
                played += messages[system:]
            elif turn.answer is None:
                played.append(_with_cells(turn, turn.message, row))
            else:
                played.append({**turn.message, "answer": self._answer(turn, row)})
        return {**row, "messages": played}


    @staticmethod
    def _answer(turn: PlayedTurn, row: dict[str, Any]) -> dict[str, Any]:
        """An answered turn's record: its own answers, or the design's with the meanings the row records."""
        if turn.answers is not None:
            return {"name": turn.answer, "answers": turn.answers}
        meanings = {"meanings": row["meanings"]} if "meanings" in row else {}
        return {"name": turn.answer, "answers": row["answers"], **meanings}


def cell_keys(node: n.Conversation) -> set[str]:
    """The cell keys the conversation's user turns read as `{{ cell.KEY }}` (a factor they fill in)."""
    return {key for turn in node.turns if turn.text is not None for key in _CELL.findall(turn.text.value)}


def _with_cells(turn: PlayedTurn, message: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """The user turn with every `{{ cell.KEY }}` replaced by the row's cell value KEY."""
    if turn.cells is None:
        return message
    span = turn.cells

    def value(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in row["cell"]:
            raise SpecError([Diagnostic(span, f"the turn reads cell.{key}, and the design's rows have no cell key "
                                        f"'{key}'", f"cell keys: {', '.join(row['cell'])}")])
        return str(row["cell"][key])

    return {**message, "content": _CELL.sub(value, message["content"])}


def resolve_conversation(node: n.Conversation, design_tokens: tuple[str, ...] | None, errors: ErrorCollector,
                         unread: str | None = None) -> CompiledConversation | None:
    """The conversation's turns checked, each problem at its turn; None when any was found. `unread`: the
    design's answer form when an answered turn cannot take it (UNREAD_FORMS)."""
    before = len(errors.diagnostics)
    for turn in node.turns:
        if turn.answer is not None and turn.answer_form is None and unread is not None:
            errors.add(turn.answer.span, f"answered turn '{turn.answer.name}' takes the design's answer "
                       f"'{unread}', which a conversation turn cannot read",
                       f'give the turn its own form, e.g. `assistant answer {turn.answer.name} choice "A" | "B"`')
    answered: dict[str, tuple[str, ...] | None] = {}
    turns = [_turn(node, turn, answered, design_tokens, errors) for turn in node.turns]
    prompts = [turn for turn in node.turns if turn.prompt]
    if len(prompts) != 1:
        where = prompts[1].span if prompts else node.span
        errors.add(where, f"conversation '{node.name}' has {len(prompts)} `user prompt` turns, not one",
                   "write `user prompt` once, where the design's own prompt is asked")
    if node.turns[-1].role != "user":
        errors.add(node.turns[-1].span, f"conversation '{node.name}' ends with an assistant turn",
                   "the design's answer is the reply to the last turn: end with a user turn")
    if len(errors.diagnostics) > before:
        return None
    return CompiledConversation(node.name, tuple(t for t in turns if t is not None))


def _turn(node: n.Conversation, turn: n.Turn, answered: dict[str, tuple[str, ...] | None],
          design_tokens: tuple[str, ...] | None, errors: ErrorCollector) -> PlayedTurn | None:
    if turn.template is not None:
        errors.add(turn.span, "a conversation played by a design holds texts, not templates",
                   "write the text in the turn (conditional-bias designs play templates through their conditions)")
        return None
    if turn.prompt:
        if turn.role != "user":
            errors.add(turn.span, "`prompt` is a user turn", "write: user prompt")
        return PlayedTurn(None)
    if turn.role == "user":
        return _user(turn, answered, errors)
    if turn.answer is None and not turn.generate:
        return PlayedTurn({"role": "assistant", "content": turn.text.value if turn.text else ""})
    message = _generated(turn, errors)
    if turn.answer is None:
        return PlayedTurn(message)
    return _answered(turn, message, answered, design_tokens, errors)


def _generated(turn: n.Turn, errors: ErrorCollector) -> dict[str, Any]:
    options = [o for o in turn.decode if o.name != "model"]
    message: dict[str, Any] = {"role": "assistant", "generate": True}
    decode = checked_decode(options, errors)
    if decode:
        message["decode"] = decode
    model = next((o for o in turn.decode if o.name == "model"), None)
    if model is not None:
        if not isinstance(model.value, str) or not JUDGE_MODEL.fullmatch(model.value):
            errors.add(model.span, f"'{model.value}' is not a model name",
                       'write the model as provider/model, e.g. model "openai/gpt-4o-mini"')
        message["model"] = model.value
    return message


def _answered(turn: n.Turn, message: dict[str, Any], answered: dict[str, tuple[str, ...] | None],
              design_tokens: tuple[str, ...] | None, errors: ErrorCollector) -> PlayedTurn | None:
    assert turn.answer is not None
    name = turn.answer.name
    if name in (FINAL, CELL) or name in answered:
        errors.add(turn.answer.span, f"answered turn '{name}' is named twice" if name in answered else
                   f"'{name}' names the design's own answer" if name == FINAL else
                   f"'{CELL}' names the row's cell ({{{{ cell.KEY }}}})", "give each answered turn a name of its own")
        return None
    form = turn.answer_form
    if form is not None and form.kind not in TURN_FORMS:
        errors.add(form.span, f"an answered turn does not take answer '{form.kind}'",
                   f"it takes: {', '.join(TURN_FORMS)}, or none (the design's answer form)")
        answered[name] = None  # known, so that the turns reading it add no errors of their own
        return None
    answered[name] = form.tokens if form is not None else design_tokens
    answers = {token: token for token in form.tokens} if form is not None else None
    return PlayedTurn(message, name, answers)


def _user(turn: n.Turn, answered: dict[str, tuple[str, ...] | None], errors: ErrorCollector) -> PlayedTurn | None:
    if turn.generate or turn.answer is not None:
        errors.add(turn.span, "only an assistant turn is generated or answered", "write: assistant generate")
        return None
    assert turn.text is not None
    text = turn.text.value
    answers = _CELL.sub("", text)  # what the runner fills in: the row's cell is filled in at compile time
    for match in _SLOT.finditer(answers):
        _check_slot(turn.text.span, match.group(1), match.group(2), answered, errors)
    if _TEMPLATE.search(_SLOT.sub("", answers)):
        errors.add(turn.text.span, "a conversation's user turn reads only earlier answers, as {{ NAME.slot }}, "
                   "and the row's cell, as {{ cell.KEY }}",
                   f"slots: {', '.join(TURN_SLOTS)}; answered turns before it: {', '.join(answered) or 'none'}")
    message: dict[str, Any] = {"role": "user", "content": text}
    if _SLOT.search(answers):
        message["fill"] = True
    if turn.push is not None:
        _check_push(turn.span, str(turn.push), answered, errors)
        message["push"] = str(turn.push)
    return PlayedTurn(message, cells=turn.text.span if _CELL.search(text) else None)


def _check_slot(span: Span, name: str, slot: str, answered: dict[str, tuple[str, ...] | None],
                errors: ErrorCollector) -> None:
    if name not in answered:
        errors.add(span, f"'{name}' is no answered turn before this one",
                   did_you_mean(name, list(answered)) or f"answered turns before it: {', '.join(answered) or 'none'}")
    elif slot not in TURN_SLOTS:
        errors.add(span, f"an answered turn has no '{slot}'", f"it has: {', '.join(TURN_SLOTS)}")
    elif slot == "other" and answered[name] is not None and len(answered[name] or ()) != 2:
        errors.add(span, f"'{name}.other' needs two options; '{name}' has {len(answered[name] or ())}")


def _check_push(span: Span, push: str, answered: dict[str, tuple[str, ...] | None], errors: ErrorCollector) -> None:
    if not answered:
        errors.add(span, "`push` needs an answered turn before it", "add: assistant answer NAME")
        return
    tokens = list(answered.values())[-1]
    if push not in PUSHES and tokens is not None and push not in tokens:
        errors.add(span, f"`push {push}` is neither {' nor '.join(PUSHES)} nor an answer token",
                   f"the turn before it answers {', '.join(tokens)}")
