"""What a bundle says about itself: the dataset card (README.md with Hugging Face front matter),
croissant.json (MLCommons Croissant 1.0 JSON-LD describing the suite.jsonl records) and bundle.json
(the sources, their licences and how to recompile them)."""

from __future__ import annotations

import json
from typing import Any

from spec_audits.contract.suite_model import Manifest, SuiteRow
from spec_audits.runner.commands.publish.sources import Origin, Source, carried_name, hf_licence, spdx_url

CROISSANT_CONTEXT = {
    "@language": "en", "@vocab": "https://schema.org/", "citeAs": "cr:citeAs", "column": "cr:column",
    "conformsTo": "dct:conformsTo", "cr": "http://mlcommons.org/croissant/", "dct": "http://purl.org/dc/terms/",
    "data": {"@id": "cr:data", "@type": "@json"}, "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "examples": {"@id": "cr:examples", "@type": "@json"}, "extract": "cr:extract", "field": "cr:field",
    "fileObject": "cr:fileObject", "fileProperty": "cr:fileProperty", "fileSet": "cr:fileSet",
    "format": "cr:format", "includes": "cr:includes", "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath", "key": "cr:key", "md5": "cr:md5", "parentField": "cr:parentField",
    "path": "cr:path", "rai": "http://mlcommons.org/croissant/RAI/", "recordSet": "cr:recordSet",
    "references": "cr:references", "regex": "cr:regex", "repeated": "cr:repeated", "replace": "cr:replace",
    "sc": "https://schema.org/", "separator": "cr:separator", "source": "cr:source", "subField": "cr:subField",
    "transform": "cr:transform", "samplingRate": "cr:samplingRate", "equivalentProperty": "cr:equivalentProperty",
}
# Croissant readers load JSON objects in a JSON Lines column only as scalars, so the record set has the
# scalar fields and one field per cell key; messages, answers and decode stay in suite.jsonl (schema.json).
_ROW_FIELDS = (("id", "sc:Text", "the row's content hash"), ("samples", "sc:Integer", "answers to draw"))
_SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))


def size_category(rows: int) -> str:
    return next((name for limit, name in _SIZES if rows < limit), "n>1M")


def cell_types(rows: list[SuiteRow]) -> dict[str, str]:
    """Each cell key's Croissant data type: sc:Integer when every value given is an integer."""
    keys = sorted({key for row in rows for key in row.cell})
    return {key: "sc:Integer" if all(isinstance(row.cell.get(key), int | None) for row in rows) else "sc:Text"
            for key in keys}


def bundle_info(manifest: Manifest, origin: Origin) -> dict[str, Any]:
    """bundle.json: the licence, where to recompile from, and every source with its licence."""
    def entry(source: Source) -> dict[str, Any]:
        return {"path": carried_name(origin, source.path), "role": source.role, "sha256": source.sha256,
                "license": source.licence,
                "license_file": source.licence_file and carried_name(origin, source.licence_file),
                "attribution": source.attribution and carried_name(origin, source.attribution)}
    compile_dir = origin.compile_dir.relative_to(origin.root()).as_posix()
    return {"bundle_format": 1, "suite": manifest.suite, "license": origin.licence,
            "compile_dir": "sources" if compile_dir == "." else f"sources/{compile_dir}",
            "spec": origin.spec.as_posix(), "sources": [entry(s) for s in origin.sources]}


def _source_datasets(origin: Origin) -> list[str]:
    spec_licence = next(s.licence_file for s in origin.sources if s.role == "spec")
    others = {s.licence_file.parent.name for s in origin.sources if s.licence_file not in (None, spec_licence)}
    return ["original", *sorted(others)]


def _front_matter(manifest: Manifest, origin: Origin) -> str:
    lines = ["---", f"license: {hf_licence(origin.licence)}",
             f"pretty_name: {json.dumps(manifest.title or manifest.suite)}",
             "task_categories:", "- text-generation", "tags:", "- llm-evaluation", "- bias-audit", "- spec-audits",
             "size_categories:", f"- {size_category(manifest.rows)}", "source_datasets:",
             *(f"- {json.dumps(name)}" for name in _source_datasets(origin)),
             "configs:", "- config_name: default", "  data_files:", "  - split: test", "    path: suite.jsonl", "---"]
    return "\n".join(lines) + "\n"


def dataset_card(manifest: Manifest, origin: Origin, info: dict[str, Any]) -> str:
    """README.md: front matter for the Hugging Face Hub, then what the suite is, its sources and licences,
    how to check and load it, and how to cite it."""
    def quoted(path: str | None) -> str:
        return f"`{path}`" if path else "-"
    source_rows = [f"| `{s['path']}` | {s['role']} | {s['license'] or 'none found'} | {quoted(s['license_file'])} | "
                   f"{quoted(s['attribution'])} | `{s['sha256']}` |" for s in info["sources"]]
    cells = ", ".join(f"`{key}` ({count})" for key, count in manifest.cells.items())
    parts = [
        f"# {manifest.title or manifest.suite}\n", (manifest.description or "").strip() + "\n",
        f"A frozen stimulus suite compiled by spec {manifest.compiler_version} from `{info['spec']}` "
        f"(seed {manifest.seed}): {manifest.rows} prompts, {manifest.trials} trials, mode `{manifest.mode}`. "
        f"Cell keys (distinct values): {cells}.\n",
        "## Files\n\n`suite.jsonl` (one prompt per line; `schema.json` is its JSON Schema), `manifest.json` "
        "(what was compiled, with hashes and counts), `croissant.json` (Croissant metadata), `bundle.json` "
        "(sources and licences), `sources/` (the spec and every file it reads), `SHA256SUMS`.\n",
        f"## Licence\n\n**{info['license']}**, computed from the licences of the sources below "
        "(the most restrictive one, which all of them allow). The sources are every file the spec reads, "
        "each with its sha256 as compiled; `spec verify` checks both.\n",
        "| file | role | licence | licence file | attribution | sha256 |\n|---|---|---|---|---|---|\n"
        + "\n".join(source_rows) + "\n",
        "## Check and use\n\n```bash\nspec verify .            # hashes, counts, schema, puzzles, recompile\n"
        "spec run . --model openai/gpt-4o-mini --out runs/mine\n```\n\n```python\nimport datasets\n"
        'rows = datasets.load_dataset("path/to/this/folder", split="test")\n```\n',
    ]
    if manifest.citation:
        parts.append(f"## Citation\n\n```\n{manifest.citation}\n```\n")
    return _front_matter(manifest, origin) + "\n" + "\n".join(parts)


def _field(name: str, data_type: str, description: str, column: str, path: str | None = None) -> dict[str, Any]:
    source: dict[str, Any] = {"fileObject": {"@id": "suite.jsonl"}, "extract": {"column": column}}
    if path:
        source["transform"] = {"jsonPath": path}
    return {"@type": "cr:Field", "@id": f"rows/{name}", "name": name, "description": description,
            "dataType": data_type, "source": source}


def croissant(manifest: Manifest, origin: Origin, cells: dict[str, str]) -> dict[str, Any]:
    """croissant.json: the dataset, its one JSONL file and one record set: id, samples and a field per cell
    key (`cells`: key -> data type)."""
    fields = [_field(name, kind, text, name) for name, kind, text in _ROW_FIELDS]
    fields += [_field(f"cell_{key}", kind, f"cell coordinate {key}", "cell", key) for key, kind in cells.items()]
    metadata: dict[str, Any] = {
        "@context": CROISSANT_CONTEXT, "@type": "sc:Dataset", "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": manifest.suite, "description": (manifest.description or manifest.title or manifest.suite).strip(),
        "version": f"{manifest.schema_version}.0.0", "url": "suite.jsonl",
        "distribution": [{"@type": "cr:FileObject", "@id": "suite.jsonl", "name": "suite.jsonl",
                          "contentUrl": "suite.jsonl", "encodingFormat": "application/jsonlines",
                          "sha256": manifest.files["suite.jsonl"]}],
        "recordSet": [{"@type": "cr:RecordSet", "@id": "rows", "name": "rows", "key": {"@id": "rows/id"},
                       "description": "one prompt of the suite (one line of suite.jsonl)", "field": fields}],
    }
    if spdx_url(origin.licence):
        metadata["license"] = spdx_url(origin.licence)
    if manifest.citation:
        metadata["citeAs"] = manifest.citation
    return metadata
