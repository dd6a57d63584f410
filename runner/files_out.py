"""Every output file a command writes (score tables, summaries, reports, exports) goes through here.

- Whole or absent: a file is written to NAME.partial beside it and renamed over NAME, so a full disk,
  a file-size limit or a kill never leaves half a file under the real name; the partial file is removed
  when writing fails, and the OSError reaches the CLI's one error policy (spec_audits/cli/__init__.py), which names the
  file and says what to do.
- CSV cells cannot become spreadsheet formulas: a text cell (or header) that begins with = + - @, a tab
  or a carriage return is written with a leading apostrophe (as is one that already begins with an
  apostrophe, so that `unquote_csv` restores exactly what was written); numbers, and text that is a
  plain number such as "-0.5", are left as they are.
- JSON holds no NaN or Infinity (not JSON; many readers refuse it): they are written as null.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from spec_audits.base.safe_files import fresh_opener, read_bytes_capped
from spec_audits.base.terminal import visible

if TYPE_CHECKING:  # pandas and numpy are imported when a table is written: `spec run` writes none
    import pandas as pd

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value: Any) -> Any:
    """A value as it may go into a CSV cell: text that a spreadsheet would read as a formula is quoted."""
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def uncsv_cell(value: Any) -> Any:
    """What `csv_cell` was given, from what it returned."""
    return value[1:] if isinstance(value, str) and value.startswith("'") else value


def csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with its headers and text cells as `csv_cell` writes them (numeric columns untouched)."""
    import pandas as pd

    out = frame.rename(columns=lambda c: csv_cell(str(c)))
    for column in _text_columns(out):
        values = out[column]
        if isinstance(values.dtype, pd.StringDtype):  # text only: the same rule as csv_cell, vectorised
            risky = values.str[:1].isin(_FORMULA_START)
            risky[risky] = ~values[risky].str.fullmatch(_PLAIN_NUMBER.pattern)
            out.loc[risky, column] = "'" + values[risky]
        else:  # mixed values: only the text among them is looked at
            out[column] = values.map(csv_cell)
    return out


def _text_columns(frame: pd.DataFrame) -> list[Any]:
    import pandas as pd

    return [c for c, t in zip(frame.columns, frame.dtypes, strict=True) if not pd.api.types.is_numeric_dtype(t)]


def read_csv(path: Path, **options: Any) -> pd.DataFrame:
    """A CSV that `write_csv` wrote, read with pandas (`options` as pd.read_csv takes them), with the
    apostrophes `csv_cell` added removed again."""
    import pandas as pd

    frame: pd.DataFrame = pd.read_csv(io.BytesIO(read_bytes_capped(path)), **options).rename(columns=uncsv_cell)
    for column in _text_columns(frame):  # only quoted cells change: a column's type stays as pandas read it
        quoted = frame[column].map(lambda v: isinstance(v, str) and v.startswith("'")).astype(bool)
        if quoted.any():
            frame.loc[quoted, column] = frame.loc[quoted, column].map(uncsv_cell)
    return frame


@contextlib.contextmanager
def replacing(path: Path, mode: str = "w") -> Iterator[IO[Any]]:
    """A file object for `path` that becomes `path` only when the block ends without an error."""
    partial = path.with_name(path.name + ".partial")
    try:
        text = "b" not in mode
        with open(partial, mode, encoding="utf-8" if text else None, newline="" if text else None,
                  opener=fresh_opener) as handle:  # a link planted at the partial name is never written through
            yield handle
        os.replace(partial, path)
    except BaseException as err:
        partial.unlink(missing_ok=True)
        if isinstance(err, OSError) and err.errno is not None and err.filename in (None, str(partial)):
            # name the file the user asked for, not the partial one
            raise OSError(err.errno, err.strerror, str(path)) from None
        raise


def score_folder(out: Path, index: str = "summary.json") -> Path:
    """`out`, created, without its `index` file, which a scorer writes last: a score stopped part way (a
    full disk) leaves a folder that `spec report` refuses, never new tables beside an old summary."""
    out.mkdir(parents=True, exist_ok=True)
    (out / index).unlink(missing_ok=True)
    return out


def write_text(path: Path, text: str) -> None:
    with replacing(path) as handle:
        handle.write(text)


def write_bytes(path: Path, data: bytes) -> None:
    with replacing(path, "wb") as handle:
        handle.write(data)


def _visible_labels(figure: Any) -> None:
    """Every text of the figure, and every fixed tick label (drawn from its axis's formatter), as `visible`."""
    for artist in figure.findobj(lambda found: hasattr(found, "get_text") and hasattr(found, "set_text")):
        if isinstance(artist.get_text(), str):
            artist.set_text(visible(artist.get_text(), keep_newlines=True))
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):  # tick labels are drawn anew from the axis's formatter
            labels = [label.get_text() for label in axis.get_ticklabels()]
            shown = [visible(label, keep_newlines=True) for label in labels]
            if shown != labels:
                axis.set_ticklabels(shown)


def write_figure(figure: Any, path: Path, **options: Any) -> None:
    """A matplotlib figure saved as PNG (`options` as savefig takes them), written whole or not at all. A
    label from a stranger's suite shows its control characters as escapes, as a terminal line does (a raw
    ESC has no glyph, and matplotlib's warning about it would print the ESC itself)."""
    _visible_labels(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", **options)
    write_bytes(path, buffer.getvalue())


def write_csv(table: pd.DataFrame, path: Path, float_format: str | None = None) -> None:
    """`table` (no index) as a formula-safe CSV, written whole or not at all. pandas writes it to the file a block of
    rows at a time: a million-row table's text is never held whole (as a StringIO it took 4 bytes a character)."""
    with replacing(path) as handle:
        csv_safe(table).to_csv(handle, index=False, float_format=float_format, lineterminator="\n")


def write_csv_rows(rows: list[dict[str, Any]], path: Path) -> None:
    """Dictionaries as a formula-safe CSV (columns in order of first appearance), written whole or not at all."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=[csv_cell(c) for c in columns], lineterminator="\n")
    writer.writeheader()
    writer.writerows({csv_cell(k): csv_cell(v) for k, v in row.items()} for row in rows)
    write_text(path, buffer.getvalue())


def finite(value: Any) -> Any:
    """A JSON-safe copy: NaN and infinities become None, numpy scalars and arrays plain Python, keys text."""
    if type(value).__module__ == "numpy":  # a numpy scalar or array, without importing numpy here
        value = value.tolist()
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def json_text(value: Any, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """`value` as JSON text (with a final newline) that holds no NaN or Infinity."""
    return json.dumps(finite(value), indent=indent, sort_keys=sort_keys, allow_nan=False) + "\n"


def write_json(path: Path, value: Any, *, sort_keys: bool = False) -> None:
    write_text(path, json_text(value, sort_keys=sort_keys))
