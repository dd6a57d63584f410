"""manifest.json's `analysis` object, read as the closed record of what a family's compile writes there.

manifest.json is not covered by the suite.jsonl hash a run checks, so its `analysis` is a stranger's data
like any row. Each family declares the record its compile writes (Family.analysis_record, a subclass of
AnalysisRecord: no other key, strict types, the domains the compile checks); the commands that hand a suite
to a family (`spec score`, `spec import`) read it through `read_analysis` before any scorer or importer
looks at it, and a violation is a located error naming each key (docs/threat-model.md).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

SHOWN = 60  # characters of a stranger's value quoted in a message
LISTED = 5  # problems listed in one message
NOT_OURS = "recompile the suite from its spec or get it from its author"

R = TypeVar("R", bound="AnalysisRecord")
CLOSED = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)
"""The config of a record and of every object inside it: no other key, no coercion, no NaN or infinity."""


class AnalysisRecord(BaseModel):
    """What every family's compile writes into manifest.analysis: the family's name. A family's record
    extends it with its own keys; this base alone is the record of a family that writes nothing else."""

    model_config = CLOSED

    family: str


def shown(value: Any) -> str:
    """A stranger's value quoted in a message, cut short: a huge value must not flood the terminal."""
    text = repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN] + "..."


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
    from spec_audits.contract.reader import MANIFEST_FILE, read_manifest  # a family's record loads with it: cheap

    manifest, _ = read_manifest(folder)
    return checked_analysis(manifest.analysis, record, folder / MANIFEST_FILE)


def checked_analysis(analysis: dict[str, Any] | None, record: type[R], path: Path) -> R:
    try:
        return record.model_validate(analysis or {})
    except ValidationError as err:
        from spec_audits.contract.reader import ContractError

        problems = [_problem(error, record) for error in err.errors()]
        more = [f"and {len(problems) - LISTED} more"] if len(problems) > LISTED else []
        raise ContractError(path, "; ".join([*problems[:LISTED], *more]), fix=NOT_OURS) from None


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
