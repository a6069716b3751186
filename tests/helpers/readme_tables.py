"""The results tables of the README's `acpwire check` sections, as data, for the tests that
check them against the checker."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.commands import ACPWIRE, ENV
from helpers.paths import INTEROP, ROOT

__all__ = [
    "SHOWN_ROOT",
    "STATUS",
    "assert_column_found",
    "console_sessions",
    "fail_without_interop_peers",
    "readme_section",
    "results_table",
]

STATUS = {"pass": "pass", "**FAIL**": "fail", "n/a": "n/a"}
"""A table's cell -> the status in `--format json`."""


def readme_section(heading: str) -> str:
    """The README's `### heading` section, up to the next heading of level 2 or 3."""
    section = (ROOT / "README.md").read_text().split(f"\n### {heading}\n", 1)[1]
    return section.split("\n## ", 1)[0].split("\n### ", 1)[0]


def results_table(section: str) -> dict[str, dict[str, str]]:
    """The section's results table: column -> row (rule, or "exit code") -> cell."""
    lines = section.splitlines()
    rows = [line for line in lines if line.startswith("| `") or line.startswith("| exit code")]
    header = next(line for line in lines if line.startswith("| rule |"))
    columns = [cell.strip() for cell in header.strip("|").split("|")][1:]
    table: dict[str, dict[str, str]] = {column: {} for column in columns}
    for row in rows:
        name, *cells = [cell.strip() for cell in row.strip("|").split("|")]
        for column, cell in zip(columns, cells, strict=True):
            table[column][name.strip("`")] = cell
    return table


SHOWN_ROOT = "/path/to/acpwire"
"""How the README's sessions show the repository's root (the sessions' directory)."""


def console_sessions(section: str, bin_folder: Path) -> list[tuple[str, str, str]]:
    """Each `$` command of the section's console blocks, run by bash from the repository's
    root with `acpwire` and `python` this tree's (wrappers written to `bin_folder`): the
    command, the lines shown after it, and what it printed (the root shown as `SHOWN_ROOT`)."""
    bin_folder.mkdir(exist_ok=True)
    for name, run in (("acpwire", f"{sys.executable} -m acpwire"), ("python", sys.executable)):
        (bin_folder / name).write_text(f'#!/bin/sh\nexec {run} "$@"\n')
        (bin_folder / name).chmod(0o755)
    env = {**ENV, "PATH": f"{bin_folder}:{ENV['PATH']}"}
    found = []
    for block in re.findall(r"```console\n(.*?)```\n", section, re.S):
        for command, shown in re.findall(r"^\$ (.*)\n((?:(?!\$ ).*\n)*)", block, re.M):
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            found.append((command, shown, done.stdout.replace(str(ROOT), SHOWN_ROOT)))
    return found


def assert_column_found(shown: dict[str, str], check_arguments: list[str]) -> None:
    """`acpwire check --format json ARGUMENTS`, run from the repository's root, finds what a
    table's column `shown` says: each rule's status and the exit code."""
    done = subprocess.run(
        [*ACPWIRE, "check", "--format", "json", *check_arguments],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    document = json.loads(done.stdout)
    found = {r["rule"]: r["status"] for r in document["results"]}
    assert found == {rule: STATUS[cell] for rule, cell in shown.items() if rule != "exit code"}
    assert done.returncode == int(shown["exit code"])


def fail_without_interop_peers() -> None:
    """Fail (never skip) the module when node + tests/interop/ts/node_modules or the Python SDK
    are missing: `nox -s tests` installs them."""
    missing = [
        *(
            []
            if shutil.which("node")
            and (INTEROP / "ts/node_modules/@agentclientprotocol/sdk").is_dir()
            else ["node or tests/interop/ts/node_modules"]
        ),
        *([] if importlib.util.find_spec("acp") else ["the Python SDK (`import acp`)"]),
    ]
    if missing:
        pytest.fail(f"missing: {' and '.join(missing)}; run `nox -s tests`", pytrace=False)
