"""manifest.json's `analysis` object, read as the closed record of what a family's compile writes there.

manifest.json is not covered by the suite.jsonl hash a run checks, so its `analysis` is a stranger's data
like any row. Each family declares the record its compile writes (Family.analysis_record, a subclass of
AnalysisRecord: no other key, strict types, the domains the compile checks); the commands that hand a suite
to a family (`spec score`, `spec import`) read it through `read_analysis` before any scorer or importer
looks at it, and a violation is a located error naming each key (docs/threat-model.md). A family's loader
then checks its rows against the record (the names, levels and answers they share), and the first row
that contradicts it is `row_contradicts`'s located error.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

from spec_audits.base.safe_files import iter_lines_capped, open_regular

if TYPE_CHECKING:  # the reader builds the row models, which a spec check (a family's record class) never needs
    from spec_audits.contract.reader import ContractError, Suite

SHOWN = 60  # characters of a stranger's value quoted in a message
LISTED = 5  # problems listed in one message
NOT_OURS = "recompile the suite from its spec or get it from its author"

R = TypeVar("R", bound="AnalysisRecord")
CLOSED = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True, defer_build=True)
"""The config of a record and of every object inside it: no other key, no coercion, no NaN or infinity; its
validator built on first use, which `spec check` never reaches (building the records cost it about 5 ms)."""


class AnalysisRecord(BaseModel):
    """What every family's compile writes into manifest.analysis: the family's name. A family's record
    extends it with its own keys; this base alone is the record of a family that writes nothing else."""

    model_config = CLOSED

    family: str


def shown(value: Any) -> str:
    """A stranger's value quoted in a message, cut short: a huge value must not flood the terminal."""
    text = repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN] + "..."


def listed_twice(values: list[str]) -> list[str]:
    """The values of a record's list given more than once, sorted (a record lists each name once)."""
    return sorted({value for value in values if values.count(value) > 1})


def domain(test: Callable[[Any], bool], words: str) -> BeforeValidator:
    """A field's domain, as the compile checks it (the test and its words, e.g. a family's ANALYSIS_DOMAINS
    entry): checked before the field's type, so a wrong type and a wrong value get the same message."""

    def check(value: Any) -> Any:
        if not test(value):
            raise PydanticCustomError("domain", "must be {words}, got {got}", {"words": words, "got": shown(value)})
        return value

    return BeforeValidator(check)


def one_of(values: tuple[str, ...]) -> BeforeValidator:
    """A field that takes one of the compile's named values."""
    return domain(lambda value: isinstance(value, str) and value in values, " or ".join(values))


def read_analysis(folder: Path, record: type[R]) -> R:
    """The suite folder's manifest.analysis as `record`; a ContractError naming each wrong key otherwise."""
    from spec_audits.contract.reader import MANIFEST_FILE, read_manifest

    manifest, _ = read_manifest(folder)
    return checked_analysis(manifest.analysis, record, folder / MANIFEST_FILE)


def checked_analysis(analysis: dict[str, Any] | None, record: type[R], path: Path) -> R:
    from spec_audits.contract.reader import ContractError

    try:
        return record.model_validate(analysis or {})
    except ValidationError as err:
        problems = [_problem(error, record) for error in err.errors()]
        more = [f"and {len(problems) - LISTED} more"] if len(problems) > LISTED else []
        raise ContractError(path, "; ".join([*problems[:LISTED], *more]), fix=NOT_OURS) from None


def cell_problem(cell: dict[str, Any], domains: Mapping[str, Collection[Any] | None]) -> str | None:
    """What is wrong with a row's cell against its record: a key the record lists that the cell lacks, or a
    value outside the record's (None: any value); None when nothing is."""
    for key, values in domains.items():
        if key not in cell:
            return f"its cell has no key {key!r}, which manifest.json's analysis lists"
        if values is not None and cell[key] not in values:
            listed = ", ".join(str(value) for value in values if value is not None)
            return f"{key} {shown(cell[key])} is not one of manifest.json's analysis ({listed})"
    return None


def tokens_problem(answers: dict[str, str], tokens: Collection[str]) -> str | None:
    """What is wrong with a row's answers against the record's answer tokens: other tokens; None when nothing."""
    if set(answers) == set(tokens):
        return None
    return f"its answers {shown(sorted(answers))} are not the analysis's tokens {shown(sorted(tokens))}"


def row_contradicts(suite: Suite, index: int, problem: str) -> ContractError:
    """The located error for the suite's `index`th row, which contradicts its analysis record (a family's loader
    checks its rows against the record before scoring): `suite.jsonl:LINE: row ID: problem`."""
    from spec_audits.contract.reader import SUITE_FILE, ContractError

    path = suite.path / SUITE_FILE
    return ContractError(path, f"row {suite.rows[index].id}: {problem}", line=_line(path, index), fix=NOT_OURS)


def _line(path: Path, index: int) -> int:
    """The line of a suite.jsonl holding its `index`th row (blank lines hold none)."""
    with open_regular(path) as handle:
        seen = -1
        for number, line in enumerate(iter_lines_capped(handle, path), start=1):
            seen += bool(line.strip())
            if seen == index:
                return number
    return index + 1


def _problem(error: Any, record: type[AnalysisRecord]) -> str:
    where = ".".join(["analysis", *(str(part) for part in error["loc"])])
    if error["type"] == "extra_forbidden" and len(error["loc"]) == 1:
        return f"{where}: not a key its family's compile writes ({', '.join(record.model_fields)})"
    if error["type"] == "extra_forbidden":
        return f"{where}: not a key its family's compile writes"
    if error["type"] == "missing":
        return f"{where}: missing"
    if error["type"] == "domain":
        return f"{where}: {error['msg']}"
    if error["type"] == "value_error":  # a record's own check across its fields: its words, not the input
        return f"{where}: {error['ctx']['error']}"
    message = str(error["msg"])
    return f"{where}: {message[:1].lower()}{message[1:]}, got {shown(error['input'])}"
