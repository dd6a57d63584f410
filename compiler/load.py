"""Read a spec file and the files it imports into one Spec AST."""

from __future__ import annotations

from pathlib import Path

from compiler import nodes as n
from compiler.errors import Diagnostic, ErrorCollector, Span, SpecError
from compiler.parse import parse_text
from compiler.tree_to_ast import build_spec

# What an import brings in: vocabulary, never another file's header or designs.
_IMPORTED = ("factors", "texts", "influences", "data", "conversations", "followups", "puzzles")


def display_path(path: Path) -> str:
    """The path as the user should see it: relative to the working directory when possible."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def read_spec(path: Path) -> tuple[str, str]:
    """The text of a spec file, or a SpecError that says why it cannot be read."""
    shown = display_path(path)
    try:
        return path.read_text(encoding="utf-8"), shown
    except FileNotFoundError:
        raise SpecError([_file_error(shown, "no such spec file")]) from None
    except UnicodeDecodeError as err:
        raise SpecError([_not_utf8(shown, err)]) from None
    except OSError as err:
        raise SpecError([_file_error(shown, f"cannot read spec file: {err.strerror}")]) from None


def load_spec(path: Path) -> tuple[n.Spec, dict[str, str]]:
    """The spec with its imports merged in, and the text of every file read (for error excerpts)."""
    sources: dict[str, str] = {}
    spec = _load(path, sources, ())
    return spec, sources


def _load(path: Path, sources: dict[str, str], stack: tuple[Path, ...]) -> n.Spec:
    text, shown = read_spec(path)
    sources[shown] = text
    errors = ErrorCollector()
    try:
        spec = build_spec(parse_text(text, shown), shown, errors)
    except SpecError as err:
        err.sources.update(sources)
        raise
    merged = {field: list(getattr(spec, field)) for field in _IMPORTED}
    for item in spec.imports:
        target = (path.parent / item.value).resolve()
        if target in stack or target == path.resolve():
            errors.add(item.span, f"import cycle: '{item.value}' imports this file again")
            continue
        if not target.is_file():
            errors.add(item.span, f"imported file not found: '{item.value}'",
                       f"paths are relative to {display_path(path.parent) or '.'}")
            continue
        imported = _load(target, sources, (*stack, path.resolve()))
        for field in _IMPORTED:
            merged[field] = list(getattr(imported, field)) + merged[field]
    errors.raise_if_any(sources)
    return spec.model_copy(update={k: tuple(v) for k, v in merged.items()})


def _not_utf8(shown: str, err: UnicodeDecodeError) -> Diagnostic:
    """Point at the first byte that is not UTF-8, counting lines and columns in the bytes before it."""
    data = bytes(err.object)
    line = data.count(b"\n", 0, err.start) + 1
    column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
    return Diagnostic(Span(shown, line, column), f"spec file is not UTF-8 text: byte 0x{data[err.start]:02x} "
                      f"cannot be decoded ({err.reason})", "save the file as UTF-8")


def _file_error(shown: str, message: str) -> Diagnostic:
    return Diagnostic(Span(shown, 1, 1), message, "check the path and try again")
