"""Start-up: wall and CPU time of `spec --help`, `spec check`, `spec show` (target under 0.5 s each), beside a
bare `python -c pass` and the floor of every spec command, `python -c "import lark, pydantic"`, measured in
the same run, median of --rounds. Issue 33's target: `spec check specs/triage.spec` within 1.5x the floor's
CPU time; the ratio is printed last. The cases take turns within each round, so a change of load during the run
weighs on all of them alike.

Every measured command runs with Python's bytecode cached (in a temporary PYTHONPYCACHEPREFIX, written by one
unmeasured run of each), as an installed spec has it: this host sets PYTHONDONTWRITEBYTECODE, so until then each
`spec` command compiled its ~64 modules from source on every run (about 0.055 s of check's CPU) while lark and
pydantic loaded their installed caches.

Measured (issue 33 item 3) on the shared 2-core Xeon, median of 7 interleaved rounds, this script on main (7602eac)
and on this change one right after the other at load average 6.0-6.6, CPU seconds: `python -c pass` 0.019, the floor
0.080; `spec check specs/triage.spec` 0.283 on main (3.52x the floor) and 0.272 after (3.41x); `spec show SUITE -n
1` 0.394 and 0.390; `spec --help` 0.043 and 0.043. main's own earlier script (no bytecode caches), in the same
minute: check 0.337 s, 4.21x. 15 more interleaved check runs: 0.276 s on main, 0.264 s after (median). What this
change removed from check: the 17 field-less shapes of compiler/clauses.py as frozen dataclasses (their generated
methods, ~9 ms of import under load), the analysis records' validators (built on first use, ~5 ms), one code
generation per template (compile_text reuses the names CompiledText found) and nine of ten evaluations of the decode
settings' annotations. What is left of check's import (-X importtime, least of 5 runs at load 5.8, summed: 164 ms,
173 on main): pydantic's validation machinery (~48 ms; triage.spec's decode settings are validated with a
TypeAdapter, so it stays), lark with `regex` (~30 ms, most of it in the floor), click (~29 ms), jinja2 (~27 ms),
importlib.metadata for the family entry points (~16 ms), our ~65 modules' own code (37 ms, 54 on main); then lark
loading its tables and scanners (~35 ms), the templates' compiles and the budget's 240 sampled rows (~40 ms), and
two scans of every installed distribution's entry points (the registry's and pydantic's plugin loader). 1.5x (0.12
s) would need the decode domains checked without pydantic, lark's scanners cached and the families' dataclasses
built on first use; not done.

check-lex (issue 33 item 3, the parser, template and budget part), this script on main (1ea2cfd) and on the change one
right after the other at load average 11.6, CPU seconds: the floor 0.120 and 0.128; `spec check specs/triage.spec`
0.452 on main (3.76x) and 0.393 after (3.07x). Under such load single timings wander by 10%, so the same check was
also counted in instructions (valgrind's callgrind, PYTHONHASHSEED=0, deterministic): 1,639M on main, 1,403M after
(-14%), the floor 445M (3.68x -> 3.15x). What went: lark's contextual lexer compiled the union of each reached
parser state's terminals (31 scanners, 110 compiles) and built a lexer for all ~500 states at load; compiler/lexer.py
tries the same terminals in lark's order, each compiled once, a state's lexer built on first use (first parse
16 -> 7 ms at load 9, same tokens and errors: tests/compiler/test_lexer.py). The saved table is read in one pass
(then parser_cache.TableParser, since replaced by lark's objects pickled whole; lark's generic deserializer took
three times as long) and the garbage collector is paused
while the ~30,000 objects of the parser load (load 27 -> 14 ms, min of 15 in-process loads at load 10.5). Each template
text is parsed once for the checks and compiled once per process (42 parses, 11 compiles and 11 code generations of
find_undeclared_variables for 9 texts before; 9, 9 and 9 now), and the budget's sample no longer hashes and tallies
rows that nothing read. What is left of loading the parser (min of 15 at load 11, GC paused): unpickling 2.7 ms,
lark's memo of terminals and rules 3.4, the tree builder's callbacks 1.1, the table 2.0; the first parse 6-7 ms, of
which ~3 build the reached states' lexers and compile the ~10 regular terminals. Not done: the 9 templates' code
(from_string 6 ms at load 11, 0.03 ms from saved code) could be kept in the user's cache beside the parser; the
garbage collector takes ~8% of check's instructions (gc.disable() for the whole command saves ~4%).

check-pyd (issue 33 item 3, the pydantic and entry-point part), this script with --rounds 7 on the branch before
and after (shared 2-core Xeon, CPU seconds): check 0.506 s against the floor's 0.132 (3.83x) at load 5.5-7.3 before;
0.357 s against 0.135 (2.64x) at load 11.5 after. `spec check specs/triage.spec` now imports no pydantic module and
not importlib.metadata (tests/compiler/test_lazy_families.py): the decode domains are checked from one plain table
(suite_terms.SETTING_DOMAINS, which the row model's Fields are made from), the families' analysis records are
imported where a suite is read, and the registry reads the installed families only for a name that is not built in
(a built-in one after a ~2 ms look at the path's entry_points.txt files). With check-lex merged: check 0.287 s, the
floor 0.135 (2.14x) at load 9.6-9.9. Left on check's path: loading the saved parser and the first parse, the nine
templates' compiles, and our ~65 modules' imports, of which building their 44 dataclasses is 30 ms at load 11.

After both and the collector paused for a check's imports and work (spec_audits/cli, compiler/commands/cli.py;
callgrind 995M -> 968M instructions), on main (289c618) with --rounds 9 at load average 1.1, CPU seconds: the floor
0.129, `spec check specs/triage.spec` 0.264 (2.06x; 3.83x at this session's start at load 0.9), `spec --help`
0.071, `spec show SUITE -n 1` 0.618. This host ran about 1.6x slower than on the day of the first paragraph (the
floor 0.080 then, 0.129 now), so compare ratios, not seconds, across paragraphs. 1.5x is not reached: click,
jinja2's sandbox and Python's start alone are 1.23x the floor (0.145 s against 0.118 in one run), leaving ~0.03 s
for ~65 modules of ours, the saved parser, the parse, the checks and the budget's 240 sampled rows.

Imports and the program's end (issue 33, callgrind instructions, deterministic): `spec check specs/triage.spec`
969M -> 852M on cde330e's tree (837M -> 739M once merged with the Record base). The `spec` program (the console entry
and `python -m spec_audits.cli`, which this script now runs) ends a check, a show and the group's help with os._exit
once its output is flushed: the interpreter's teardown was 62M of check's 969M, 43M of show's, 23M of --help's 216M.
In it a check keeps the collector paused to its end (enabling it again walked all the check had made: 10M; 15M with
the command's and click's imports paused too). A clean check no longer imports difflib, csv, the writing stages,
conversations, or the influence family's item designs and `trials N per cell` (35M), compiles no secret-scrubbing
pattern it does not use (4M), nor parses the SDK's source with ast to find a name's module (8M). Left: click is ~49M
of check (import 38M with uuid and platform, which click.types needs at class definition; its group and commands;
dispatch ~3M): only a second argument parser would remove it. lark imports the optional `regex` (55M) although only
a terminal in regex's own syntax (a Unicode category) needs it, and spec's grammar has none.

All four slices merged (issue 33's target reached), on main (1ded032): callgrind 969M -> 605M instructions for
`spec check specs/triage.spec` (the floor 435M: 1.39x), each slice measured on its own branch: check's 43
dataclasses as Record subclasses (spec_audits/base/records.py, no code generated per class: -131M, 26-32 ms of
class building -> under 2 ms), the imports and the program's end above (-98M), the saved parser as lark's own
objects pickled whole and read by C unpickling under an allow-list (loading 84M -> 18M; with the lexer's
terminal checks once per grammar and the AST built without lark's per-node wrapper, the parse slice 135M -> 64M),
and each template's compiled code, names and syntax tree kept in the user's cache (compiler/template_cache.py:
check_spec 21M -> 4M, prepare_designs 69M -> 20M). This script with --rounds 9 at load average 1.0, CPU seconds:
`python -c pass` 0.033, the floor 0.150, `spec check specs/triage.spec` 0.192 = 1.28x the floor (target 1.5x),
`spec --help` 0.069, `spec show SUITE -n 1` 0.632 (over its 0.5 s: show reads the suite with pydantic's models
and pandas; not part of this round). The host was again slower than in the paragraph above (floor 0.150 vs 0.129).

Usage: python benchmarks/startup_bench.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = [sys.executable, "-m", "spec_audits.cli"]  # the `spec` program itself (spec_audits/cli `run`)


FLOOR = "python -c 'import lark, pydantic'"
CHECK = "spec check specs/triage.spec"


def _cpu() -> float:
    """CPU seconds (user and system) of every child this process waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cached_bytecode(pycache: str) -> dict[str, str]:
    """The environment of every measured command: Python's bytecode cached in `pycache`, as an installed spec
    has it, even where the host sets PYTHONDONTWRITEBYTECODE (otherwise each `spec` command would compile its
    ~60 modules from source every time while lark and pydantic load their installed caches)."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": pycache}


def measure(cases: dict[str, list[str]], rounds: int, env: dict[str, str]) -> dict[str, tuple[float, float]]:
    """Each case's median wall and median CPU seconds over `rounds` runs after one unmeasured run (which
    writes the bytecode caches), the cases taking turns within each round, so that a change in the
    machine's load during the run weighs on every case alike."""
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    for command in cases.values():
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True, env=env)
    for _ in range(rounds):
        for name, command in cases.items():
            cpu, started = _cpu(), time.perf_counter()
            subprocess.run(command, cwd=ROOT, check=True, capture_output=True, env=env)
            walls[name].append(time.perf_counter() - started)
            cpus[name].append(_cpu() - cpu)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name])) for name in cases}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([*SPEC, "compile", "specs/triage.spec", "-o", f"{tmp}/triage"], cwd=ROOT, check=True,
                       capture_output=True)
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            FLOOR: [sys.executable, "-c", "import lark, pydantic"],
            "spec --help": [*SPEC, "--help"],
            CHECK: [*SPEC, "check", "specs/triage.spec"],
            "spec show SUITE -n 1": [*SPEC, "show", f"{tmp}/triage", "-n", "1"],
        }
        figures = measure(cases, rounds, cached_bytecode(f"{tmp}/pycache"))
    bare = figures["python -c pass"][0]
    for name, (seconds, cpu) in figures.items():
        print(f"{name:36} {seconds:6.3f} s wall ({seconds / bare:4.1f}x a bare interpreter), {cpu:6.3f} s CPU")
    ratio = figures[CHECK][1] / figures[FLOOR][1]
    print(f"{CHECK} / {FLOOR}: {ratio:.2f}x CPU (target: at most 1.5x); load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
