"""Data sources: `where` filters and seeded `sample N [per FIELD] [seed S]` over CSV rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from spec_audits.compiler.data_source import Row, read_rows
from spec_audits.compiler.errors import ErrorCollector
from spec_audits.compiler.load import load_spec
from spec_audits.dispatch import registry

CSV = "id,polarity,topic\n" + "".join(
    f"r{i:02d},{'neg' if i % 3 else 'pos'},{'work' if i % 2 else 'home'}\n" for i in range(30)
)


def rows_for(tmp_path: Path, clauses: str, seed: int = 5, csv: str = CSV) -> tuple[list[Row] | None, list[str]]:
    (tmp_path / "rows.csv").write_text(csv, encoding="utf-8")
    spec_path = tmp_path / "data.spec"
    spec_path.write_text(f'data bank from "rows.csv" key id {clauses}\n', encoding="utf-8")
    spec, _ = load_spec(spec_path, registry.syntax())
    errors = ErrorCollector()
    rows = read_rows(spec.data[0], (), seed, errors)
    return rows, [f"{d.span.line}:{d.span.column}: {d.message}" for d in errors.diagnostics]


def test_where_keeps_matching_rows_in_file_order(tmp_path: Path) -> None:
    rows, errors = rows_for(tmp_path, 'where topic == "work" and polarity != "pos"')
    assert not errors and rows is not None
    assert [r["id"] for r in rows] == [f"r{i:02d}" for i in range(30) if i % 2 and i % 3]


def test_sample_per_field_takes_n_of_each_group_seeded_by_key(tmp_path: Path) -> None:
    rows, errors = rows_for(tmp_path, "sample 4 per polarity")
    assert not errors and rows is not None
    assert sorted(r["polarity"] for r in rows) == ["neg"] * 4 + ["pos"] * 4
    again, _ = rows_for(tmp_path, "sample 4 per polarity")
    other, _ = rows_for(tmp_path, "sample 4 per polarity seed 99")
    assert again == rows and other != rows


def test_adding_rows_keeps_the_rows_already_sampled_when_still_ranked_first(tmp_path: Path) -> None:
    rows, _ = rows_for(tmp_path, "sample 30")
    assert rows is not None and len(rows) == 30
    small, _ = rows_for(tmp_path, "sample 3")
    extended, _ = rows_for(tmp_path, "sample 3", csv=CSV + "r99,neg,work\n")
    assert small is not None and extended is not None
    # a row's rank depends on its key alone: the new row can only displace, never reshuffle
    assert {r["id"] for r in extended} - {"r99"} <= {r["id"] for r in small}


@pytest.mark.parametrize(
    ("clauses", "expected"),
    [
        ('where topc == "work"', "1:40: data 'bank': no column 'topc' to filter on"),
        ("where topic > 3", "1:40: data 'bank': the filter compares text with a number"),
        ('where topic == "garden"', "1:40: data 'bank': the filter keeps no row"),
        ("sample 11 per polarity", "1:1: data 'bank': cannot sample 11 rows with polarity = 'pos': only 10 there"),
        ("sample 2 per polarty", "1:1: data 'bank': no column 'polarty' to sample per"),
    ],
)
def test_bad_filters_and_samples_are_located(tmp_path: Path, clauses: str, expected: str) -> None:
    rows, errors = rows_for(tmp_path, clauses)
    assert rows is None and errors == [expected]
