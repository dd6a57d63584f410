"""`spec generate`: run a spec's `generator` block (its family writes and judges the data)."""

from __future__ import annotations

from pathlib import Path

import click

from spec_audits.base.terminal import echo
from spec_audits.compiler.commands.cli import SpecFailed
from spec_audits.compiler.dispatch.build import check_file
from spec_audits.compiler.errors import SpecError
from spec_audits.runner.services.provider_errors import CallFailed, FatalError


@click.command("generate")
@click.argument("spec_file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--generator", "name", default=None, help="The generator block to run [default: the spec's only one].")
@click.option("--model", default=None, help="The model that writes the data [default: the block's model].")
@click.option("--jury", default=None, help="Comma-separated jury models [default: the block's jury].")
@click.option("-o", "--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="The CSV to write [default: the block's `write` file]; a .json sidecar holds its sha256.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N input rows.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="Override the generator's max_tokens.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
def generate(spec_file: Path, name: str | None, model: str | None, jury: str | None, out: Path | None,
             limit: int | None, max_tokens: int | None, no_cache: bool) -> None:
    """Write data with a model and keep what a jury accepts, frozen into a hashed CSV the spec can read.

    \b
    Example:
      spec generate specs/cognitive_bias.spec --model openai/gpt-4o --limit 2 -o bank.try.csv

    Nothing is written unless every call succeeds; calls already answered come
    from the response cache when you rerun. Exit status: 0 written; 3 stopped
    at once (no key, refused key, unknown model, no server); 6 a call failed
    after its retries; 1 and 2 as for every command (docs/running.md).
    """
    try:
        checked = check_file(spec_file)
    except SpecError as err:
        raise SpecFailed(err.render()) from None
    if not checked.generators:
        raise click.UsageError(f"{spec_file} declares no generator block")
    if name is None and len(checked.generators) > 1:
        raise click.UsageError(f"{spec_file} has several generators; pick one with --generator: "
                               f"{', '.join(checked.generators)}")
    chosen = name or next(iter(checked.generators))
    if chosen not in checked.generators:
        raise click.UsageError(f"no generator '{chosen}' in {spec_file}: {', '.join(checked.generators)}")
    family, resolved = checked.generators[chosen]
    assert family.generate is not None
    options = {"model": model, "jury": [m.strip() for m in jury.split(",")] if jury else None, "out": out,
               "limit": limit, "max_tokens": max_tokens, "use_cache": not no_cache}
    try:
        lines = family.generate(resolved, options)
    except FatalError as err:
        raise FatalError(f"generate stopped: {err}; nothing was written") from None
    except CallFailed as err:
        raise CallFailed(f"generate failed: a model call failed after its retries: {err}; nothing was written. "
                         "Rerun once the provider answers: calls already answered come from the cache") from None
    for line in lines:
        echo(line)
