"""The `spec` program ends a check, a show and the group's own help without the interpreter's teardown
(spec_audits/cli `run`): what it prints and its exit status are those of `main`, a closed pipe included; any
other command, and `main` called by another program, end as Python always does."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support import ROOT, shipped_suite

TRIAGE = str(ROOT / "specs" / "triage.spec")
BROKEN = "tests/fixtures/malformed/after_line_zero.spec"
# an atexit handler stands for the teardown: it prints only where the interpreter ends as usual
PROBE = ("import atexit, gc, sys, threading\n"
         "atexit.register(lambda: print('teardown', file=sys.stderr))\n"
         "import spec_audits.cli as cli\n"
         "entry, sys.argv = sys.argv[1], ['spec', *sys.argv[2:]]\n"
         "if entry == 'traced':\n"
         "    sys.settrace(lambda *_: None)\n"
         "    atexit.register(lambda: print('collector', gc.isenabled(), file=sys.stderr))\n"
         "if entry == 'covered':  # coverage on sys.monitoring sets no tracer, and saves its data at exit\n"
         "    sys.modules['coverage'] = type(sys)('coverage')\n"
         "if entry == 'threaded':  # a thread that works until the main thread ends\n"
         "    threading.Thread(target=lambda: (threading.main_thread().join(), print('thread done', file=sys.stderr))"
         ").start()\n"
         "cli.main() if entry == 'main' else cli.run()\n")


def _spec(entry: str, *argv: str, stdout: int = subprocess.PIPE, buffered: bool = True) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "" if buffered else "1"}
    done = subprocess.run([sys.executable, "-c", PROBE, entry, *argv], cwd=ROOT, env=env, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=300)
    return done.returncode, done.stdout or "", done.stderr


@pytest.mark.parametrize("argv", [("check", TRIAGE), ("check", BROKEN), ("--help",), ("check", "--help"),
                                  ("chek",), ("show", "SUITE", "-n", "2")])
def test_a_check_and_the_help_end_without_the_teardown_and_print_what_main_prints(argv: tuple[str, ...]) -> None:
    argv = tuple(str(shipped_suite("option_order")) if arg == "SUITE" else arg for arg in argv)
    status, out, err = _spec("run", *argv)
    assert "teardown" not in err
    assert argv[0] != "show" or (status == 0 and out.startswith("suite option_order: 96 prompts"))
    assert (status, out, err + "teardown\n") == _spec("main", *argv)


def test_a_check_prints_its_verdict_and_a_broken_spec_its_located_error() -> None:
    assert _spec("run", "check", "specs/triage.spec")[:2] == (0, (
        "specs/triage.spec: design 'main' is valid: 5 factors, 7 influences, 3 conditions, 500 comparisons, "
        "2 display orders\n"
        "specs/triage.spec: planned size: 15,000 rows, 60,000 trials, about 10.1 MB\n"
        "specs/triage.spec: estimated compile time: about 0.8 s of CPU time at the reference pace (counted on 240 "
        "sampled rows: 9,348 template steps)\n"))
    assert _spec("run", "check", BROKEN) == (1, "", (
        "tests/fixtures/malformed/after_line_zero.spec:13:17: error: after_line needs a line number >= 1, got 0\n"
        '   13 | influence nudge after_line 0 "Choose {{ target.plural }}."\n'
        "      |                 ^^^^^^^^^^^^\n\n1 error found.\n"))


def test_other_commands_and_a_traced_process_end_as_python_does() -> None:
    assert _spec("run", "compile", "--help")[2] == "teardown\n"
    assert _spec("traced", "compile", "--help")[2] == "collector True\nteardown\n"
    assert _spec("threaded", "check", TRIAGE)[::2] == (0, "thread done\nteardown\n")  # Python waits for the thread
    assert _spec("covered", "check", TRIAGE)[::2] == (0, "teardown\n")


def test_a_checks_collector_stays_paused_to_the_end_of_the_program_only() -> None:
    """A check runs with the collector paused (compiler/commands/cli.py); enabling it again at its end would walk
    all the check made, only for the process to end: in the program it stays paused, under `main` it is restored."""
    assert _spec("traced", "check", TRIAGE)[2] == "collector False\nteardown\n"
    probe = "import gc, sys\nfrom spec_audits.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n" \
            "    print(gc.isenabled())\n"
    done = subprocess.run([sys.executable, "-c", probe, "check", TRIAGE], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=True)
    assert done.stdout.splitlines()[-1] == "True"


@pytest.mark.parametrize("buffered", [True, False])
def test_a_closed_pipe_ends_as_it_did(buffered: bool) -> None:
    """Python's own flush at its end reports the closed pipe (status 120) when stdout is buffered; unbuffered, the
    check's first line fails: the same either way with or without the early end."""
    read, write = os.pipe()
    os.close(read)
    try:
        ran = _spec("run", "check", TRIAGE, stdout=write, buffered=buffered)
        called = _spec("main", "check", TRIAGE, stdout=write, buffered=buffered)
    finally:
        os.close(write)
    assert ran[0] == called[0] and ran[0] != 0
    assert ran[2].replace("teardown\n", "") == called[2].replace("teardown\n", "")
    assert "Broken pipe" in ran[2]
