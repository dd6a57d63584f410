"""Read a spec file and the files it imports into one Spec AST."""

from __future__ import annotations

from pathlib import Path

from spec_audits.compiler import nodes as n
from spec_audits.compiler.clauses import Syntax
from spec_audits.compiler.errors import Diagnostic, ErrorCollector, Span, SpecError
from spec_audits.compiler.files import checked_path, kind_problem
from spec_audits.compiler.parse import LazySyntax
from spec_audits.compiler.recover import parse_spec_text
from spec_audits.compiler.tree_to_ast import build_spec

# What an import brings in: vocabulary, never another file's header or designs.
_IMPORTED = ("factors", "texts", "influences", "data", "conversations", "followups", "puzzles")


def display_path(path: Path) -> str:
    """The path as the user should see it: relative to the working directory when possible."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def read_spec(path: Path) -> tuple[str, str]:
    """The text of a spec file (a UTF-8 byte-order mark dropped), or a SpecError that says why it cannot
    be read."""
    shown = display_path(path)
    try:
        problem = kind_problem(path)
        if problem is not None:
            raise SpecError([_file_error(shown, f"the spec file {problem}")])
        return path.read_text(encoding="utf-8-sig"), shown
    except FileNotFoundError:
        raise SpecError([_file_error(shown, "no such spec file")]) from None
    except UnicodeDecodeError as err:
        raise SpecError([_not_utf8(shown, err)], {shown: bytes(err.object).decode("utf-8", "replace")}) from None
    except OSError as err:
        raise SpecError([_file_error(shown, f"cannot read spec file: {err.strerror}")]) from None
    except ValueError:
        raise SpecError([_file_error(shown.replace("\0", "\\0"), "the spec path contains a NUL byte")]) from None


def load_spec(path: Path, syntax: Syntax | LazySyntax) -> tuple[n.Spec, dict[str, str]]:
    """The spec with its imports merged in, and the text of every file read (for error excerpts); its
    designs take the clauses of `syntax` (the registry's `syntax()`, or only those of the families each
    file names: compiler/parse.py `LazySyntax`). A SpecError lists every mistake found while reading.

    A file imported along two paths (a diamond) is merged once; a cycle is an error naming its chain."""
    errors = ErrorCollector()
    spec, sources = collect_spec(path, syntax, errors)
    errors.raise_if_any(sources)
    return spec, sources


def collect_spec(path: Path, syntax: Syntax | LazySyntax, errors: ErrorCollector) -> tuple[n.Spec, dict[str, str]]:
    """load_spec, its mistakes added to `errors` rather than raised, so that the checks run on what parsed
    (compiler/recover.py); only a file that cannot be read or parsed at all is a SpecError."""
    sources: dict[str, str] = {}
    spec = _load(path, sources, (), set(), syntax, errors)
    return spec, sources


def _load(path: Path, sources: dict[str, str], chain: tuple[Path, ...], loaded: set[Path],
          syntax: Syntax | LazySyntax, errors: ErrorCollector) -> n.Spec:
    text, shown = read_spec(path)
    sources[shown] = text
    here = path.resolve()
    loaded.add(here)
    try:
        parsed = parse_spec_text(text, shown, syntax)
    except SpecError as err:
        err.diagnostics[:0] = errors.diagnostics
        err.sources.update(sources)
        raise
    errors.extend(parsed.diagnostics)
    if not parsed.whole:
        raise SpecError(list(errors.diagnostics), {**sources})
    spec = build_spec(parsed.tree, shown, errors, parsed.syntax)
    if parsed.damaged:
        spec = n.replaced(spec, designs=tuple(
            n.replaced(d, damaged=True) if d.span.line in parsed.damaged else d for d in spec.designs))
    merged = {field: list(getattr(spec, field)) for field in _IMPORTED}
    refused = ErrorCollector()  # an import that cannot be read: its vocabulary would be reported missing
    for item in spec.imports:
        target = _import_target(path, item, (*chain, here), loaded, refused)
        if target is None:
            continue
        imported = _load(target, sources, (*chain, here), loaded, syntax, errors)
        for field in _IMPORTED:
            merged[field] = list(getattr(imported, field)) + merged[field]
    if refused.diagnostics:  # so the checks wait, as after a statement lost to a syntax error
        errors.extend(refused.diagnostics)
        raise SpecError(list(errors.diagnostics), dict(sources))
    return n.replaced(spec, **{k: tuple(v) for k, v in merged.items()})


def _import_target(path: Path, item: n.Text, chain: tuple[Path, ...], loaded: set[Path],
                   errors: ErrorCollector) -> Path | None:
    """The file an import names, or None when it is refused, missing, in a cycle or already merged."""
    if not item.value.endswith(".spec"):
        errors.add(item.span, f"imports name spec files: '{item.value}' does not end in .spec",
                   "import the .spec file that declares the vocabulary")
        return None
    target = checked_path(path.parent, item.value, item.span, "imported file", errors)
    if target is None:
        return None
    if not target.is_file():
        errors.add(item.span, f"imported file not found: '{item.value}'",
                   f"paths are relative to {display_path(path.parent) or '.'}")
        return None
    real = target.resolve()
    if real in chain:
        cycle = " -> ".join(display_path(p) for p in (*chain[chain.index(real):], real))
        errors.add(item.span, f"import cycle: {cycle}", "remove one of the imports")
        return None
    return None if real in loaded else target


def _not_utf8(shown: str, err: UnicodeDecodeError) -> Diagnostic:
    """Point at the first byte that is not UTF-8, counting lines and columns in the bytes before it."""
    data = bytes(err.object)
    line = data.count(b"\n", 0, err.start) + 1
    column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
    return Diagnostic(Span(shown, line, column), f"spec file is not UTF-8 text: byte 0x{data[err.start]:02x} "
                      f"at offset {err.start} cannot be decoded ({err.reason})", "save the file as UTF-8")


def _file_error(shown: str, message: str) -> Diagnostic:
    return Diagnostic(Span(shown, 1, 1), message, "check the path and try again")
