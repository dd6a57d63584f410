"""Write a bundle folder: the suite's files, the sources with their licences, bundle.json, the dataset
card, croissant.json and SHA256SUMS; refused when the spec no longer compiles to the suite."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from spec_audits.contract.reader import ContractError, read_suite
from spec_audits.runner.commands.publish.archive import is_archive, write_archive
from spec_audits.runner.commands.publish.card import bundle_info, cell_types, croissant, dataset_card
from spec_audits.runner.commands.publish.members import scan
from spec_audits.runner.commands.publish.provenance import BUNDLE_FILE
from spec_audits.runner.commands.publish.sources import carried_name, origin_of
from spec_audits.runner.commands.publish.sums import SUMS_FILE, sums_text
from spec_audits.runner.commands.publish.verify import SUITE_FILES, Options, check_recompile

OWN = Options(seconds=86_400.0, memory_mib=1 << 20)
"""The recompile of one's own suite at bundling: held to its rows, trials and bytes, not a time or memory."""


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def build_folder(suite_dir: Path, folder: Path, allow_unlicensed: bool) -> dict[str, Any]:
    """Fill the empty `folder` with the bundle of `suite_dir`; returns bundle.json's content."""
    suite = read_suite(suite_dir)
    origin = origin_of(suite_dir, allow_unlicensed)
    for name in SUITE_FILES:
        shutil.copyfile(suite_dir / name, folder / name)
    for path in origin.files():
        target = folder / carried_name(origin, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    info = bundle_info(suite.manifest, origin)
    (folder / BUNDLE_FILE).write_text(_json(info), encoding="utf-8")
    (folder / "README.md").write_text(dataset_card(suite.manifest, origin, info), encoding="utf-8")
    metadata = croissant(suite.manifest, origin, cell_types(suite.rows))
    (folder / "croissant.json").write_text(_json(metadata), encoding="utf-8")
    differences = check_recompile(scan(folder), suite, OWN)
    if differences:
        raise ContractError(suite_dir, f"the spec does not compile to this suite any more: {'; '.join(differences)}",
                            fix="compile the suite again with `spec compile`, then bundle it")
    (folder / SUMS_FILE).write_text(sums_text(folder), encoding="utf-8")
    return info


def write_bundle(suite_dir: Path, out: Path, allow_unlicensed: bool = False) -> dict[str, Any]:
    """`suite_dir` bundled as `out`: a .tar.gz / .tgz archive, or else a folder (replacing an older bundle)."""
    if out.exists() and not is_archive(out) and any(out.iterdir()) and not (out / SUMS_FILE).is_file():
        raise ContractError(out, "exists and is not a bundle", fix="give -o a new folder or a NAME.tar.gz")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{out.name}.tmp-", dir=out.parent) as scratch:
        staging = Path(scratch) / "bundle"
        staging.mkdir()
        info = build_folder(suite_dir, staging, allow_unlicensed)
        if is_archive(out):
            partial = Path(scratch) / out.name
            write_archive(staging, partial)
            partial.replace(out)
        else:
            shutil.rmtree(out, ignore_errors=True)
            staging.rename(out)
    return info
