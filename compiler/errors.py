"""Diagnostics that point at the spec: file:line:column, the source line, a caret, and a hint."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from spec_audits.base.records import Record, field


class Span(Record):
    """Where a node sits in its spec file (1-based lines and columns, end exclusive)."""

    file: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None


class Diagnostic(Record):
    """One user-facing error about a spec."""

    span: Span
    message: str
    hint: str | None = None

    def render(self, source: str | None = None) -> str:
        head = f"{self.span.file}:{self.span.line}:{self.span.column}: error: {self.message}"
        lines = [head]
        if source is not None:  # only texts the loader read as specs are quoted, never a file reopened here
            lines.extend(_excerpt(source, self.span))
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)


class SpecError(Record, Exception, frozen=False):
    """Every diagnostic found in a spec; raised once so that `spec check` reports them all."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.render()

    def render(self) -> str:
        ordered = sorted(self.diagnostics, key=lambda d: (d.span.file, d.span.line, d.span.column))
        parts = [d.render(self.sources.get(d.span.file)) for d in ordered]
        count = len(ordered)
        parts.append(f"{count} error{'s' if count != 1 else ''} found.")
        return "\n\n".join(parts)


class ErrorCollector:
    """Collects diagnostics across a stage and raises them together."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self._seen: set[Diagnostic] = set()

    def add(self, span: Span, message: str, hint: str | None = None) -> None:
        """Record a diagnostic; one already recorded (a shared check and a family finding the same
        template mistake) is not repeated."""
        diagnostic = Diagnostic(span, message, hint)
        if diagnostic not in self._seen:
            self._seen.add(diagnostic)
            self.diagnostics.append(diagnostic)

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        for diagnostic in diagnostics:
            self.add(diagnostic.span, diagnostic.message, diagnostic.hint)

    def raise_if_any(self, sources: dict[str, str] | None = None) -> None:
        if self.diagnostics:
            raise SpecError(list(self.diagnostics), dict(sources or {}))


def report_repeats(items: Iterable[tuple[str, Span]], what: str, errors: ErrorCollector) -> None:
    """Report each name given again at its second place, pointing back at its first."""
    first: dict[str, Span] = {}
    for name, span in items:
        if name in first:
            errors.add(span, f"{what} '{name}' is given twice (first at {first[name].line}:{first[name].column})",
                       "remove one of them")
        first.setdefault(name, span)


MAX_SCORED = 40  # candidates scored by difflib per hint: a spec with thousands of names stays fast


def close_match(word: str, candidates: Sequence[str], cutoff: float) -> str | None:
    """difflib's closest of `candidates` to `word` (get_close_matches, n=1), or None. difflib is imported only
    where a candidate's length leaves it a chance (difflib's own first test: a ratio is at most 2 * the shorter
    length / the two lengths), so a clean spec never loads it."""
    if not any(_longest_ratio(word, option) >= cutoff for option in candidates):
        return None
    import difflib

    close = difflib.get_close_matches(word, candidates, n=1, cutoff=cutoff)
    return close[0] if close else None


def _longest_ratio(a: str, b: str) -> float:
    """The highest similarity ratio two texts of these lengths can have (difflib's real_quick_ratio)."""
    total = len(a) + len(b)
    return 2.0 * min(len(a), len(b)) / total if total else 1.0


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """A 'did you mean' hint for a misspelt name, or a list of the valid names.

    difflib's ratio is costly, so among many candidates only the MAX_SCORED nearest in length (then
    sharing the first letter) are scored: a misspelling rarely changes a name's length by much."""
    options = sorted(set(candidates))
    nearest = options if len(options) <= MAX_SCORED else _nearest_in_length(name, options)
    close = close_match(name, nearest, 0.6)
    if close is not None:
        return f"did you mean '{close}'?"
    if options and len(options) <= 12:
        return "valid names: " + ", ".join(f"'{o}'" for o in options)
    return None


def _nearest_in_length(name: str, options: list[str]) -> list[str]:
    import heapq  # only a hint among many names needs it

    return heapq.nsmallest(MAX_SCORED, options, key=lambda o: (abs(len(o) - len(name)), o[:1] != name[:1]))


def _excerpt(source: str, span: Span) -> list[str]:
    source_lines = source.splitlines()
    if not 1 <= span.line <= len(source_lines):
        return []
    line = source_lines[span.line - 1]
    width = 1
    if span.end_line == span.line and span.end_column and span.end_column > span.column:
        width = span.end_column - span.column
    gutter = f"{span.line:>5} | "
    caret = " " * (len(gutter) - 2) + "| " + " " * (span.column - 1) + "^" * width
    return [gutter + line, caret]
