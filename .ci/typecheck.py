"""Type-check the package spec_audits with mypy, as it installs: quiet on success, mypy's report otherwise.

pyproject.toml's package-dir installs the folders compiler/, runner/ and families/ as spec_audits.compiler,
spec_audits.runner and spec_audits.families. mypy cannot see that mapping: it names a module by its folder
(compiler/dispatch/build.py would be `compiler.dispatch.build`), it cannot follow the import hook of the
editable install, and `explicit_package_bases`/`mypy_path` only add search roots, never rename one. So this
script builds the installed layout as a tree of folder links under build/mypy/ (spec_audits/ -> its entries, plus
spec_audits/compiler -> compiler/, ...; a new module is seen without a rebuild), runs `mypy -p spec_audits`
in it with the [tool.mypy] settings of pyproject.toml, and writes mypy's file names back as the
repository's (build/mypy/spec_audits/compiler/x.py -> compiler/x.py).

    .venv/bin/python .ci/typecheck.py [MYPY OPTIONS]    # e.g. --no-incremental
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "mypy"
PACKAGE = "spec_audits"


def package_dirs() -> dict[str, str]:
    """Import name -> folder, as pyproject.toml's package-dir installs them."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return dict(setuptools["package-dir"])


def build_tree(dirs: dict[str, str]) -> None:
    """build/mypy/spec_audits/...: the installed layout, as links into the repository's folders."""
    shutil.rmtree(TREE, ignore_errors=True)
    top = TREE / PACKAGE
    top.mkdir(parents=True)
    mapped = {name.split(".", 1)[1] for name in dirs if name != PACKAGE}
    for entry in (ROOT / dirs[PACKAGE]).iterdir():
        if entry.name != "__pycache__" and entry.name not in mapped:
            (top / entry.name).symlink_to(entry)
    for name in mapped:
        (top / name).symlink_to(ROOT / dirs[f"{PACKAGE}.{name}"], target_is_directory=True)


def repository_path(line: str, dirs: dict[str, str]) -> str:
    """mypy's file name in the link tree -> the repository's (longest import name first)."""
    for name in sorted(dirs, key=len, reverse=True):
        prefix = name.replace(".", "/") + "/"
        if line.startswith(prefix):
            return dirs[name] + "/" + line[len(prefix) :]
    return line


def main(argv: list[str]) -> int:
    dirs = package_dirs()
    build_tree(dirs)
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
               "--cache-dir", str(ROOT / ".mypy_cache"), *argv, "-p", PACKAGE]
    done = subprocess.run(command, cwd=TREE, capture_output=True, text=True, env=os.environ | {"MYPY_FORCE_COLOR": "0"})
    if done.returncode == 0:
        return 0
    for line in (done.stdout + done.stderr).splitlines():
        print(repository_path(line, dirs))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
