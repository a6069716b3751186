"""Peers run as subprocesses: `python -c` scripts, on the test's loop where they run acpwire."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import acp_schema
import acpwire
from helpers.paths import ROOT

SOURCE_PATH = os.pathsep.join(
    str(Path(path).parents[1]) for path in (acpwire.__file__, acp_schema.__file__)
)
"""The folders acpwire and acp_schema are imported from (generated/ and runtime/ here)."""

PYTHONPATH = {"PYTHONPATH": SOURCE_PATH}
"""The environment (to add) for a subprocess that imports acpwire or acp_schema."""


def python(code: str) -> list[str]:
    """The command that runs `code` in this interpreter."""
    return [sys.executable, "-c", code]


def last_line_of(program: str) -> str:
    """What `program` (a `python -c` script importing acpwire) prints last; it must succeed."""
    env = {**os.environ, **PYTHONPATH}
    proc = subprocess.run(python(program), capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def bindings_only(code: str, *options: str) -> subprocess.CompletedProcess[str]:
    """`code` (dedented) run by a new interpreter (with `options`, e.g. `-X importtime`) that
    imports from generated/ only: nothing is imported yet, no acpwire. It must succeed."""
    command = [sys.executable, *options, "-c", textwrap.dedent(code)]
    env = {"PYTHONPATH": str(ROOT / "generated")}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def loop_script(code: str) -> str:
    """`code` for a `python -c` subprocess, given `run_on(loop, function)` (the fixtures' own:
    a subprocess agent runs on the test's loop)."""
    return "import anyio\nfrom acpwire.fixtures.loops import run_on\n" + code
