"""`acpwire check` against the official SDKs' agents of the interop tests (tests/interop/README.md:
TypeScript `@agentclientprotocol/sdk` 2.4.0 v2 and v1, Python `agent-client-protocol` 0.12.1 v1)
and acpwire's echo agent: the results are the README's table ("acpwire check"), rule by rule,
and the README's sessions print what it shows. Fails (never skips) when node +
tests/interop/ts/node_modules or the Python SDK are missing: `nox -s tests` installs them."""

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

MISSING = [
    *(
        []
        if shutil.which("node") and (INTEROP / "ts/node_modules/@agentclientprotocol/sdk").is_dir()
        else ["node or tests/interop/ts/node_modules"]
    ),
    *([] if importlib.util.find_spec("acp") else ["the Python SDK (`import acp`)"]),
]
if MISSING:
    pytest.fail(f"missing: {' and '.join(MISSING)}; run `nox -s tests`", pytrace=False)

SECTION = (ROOT / "README.md").read_text().split("\n### acpwire check\n", 1)[1]
SECTION = SECTION.split("\n## ", 1)[0]
COLUMNS = {
    # the table's column: the agent command (from the repository's root), its options
    "TS SDK v2": (["node", "tests/interop/ts/agent_v2.mjs"], []),
    "TS SDK v1": (["node", "tests/interop/ts/agent_v1.mjs"], []),
    "Python SDK v1": ([sys.executable, "tests/interop/py/agent_v1.py"], []),
    "acpwire echo v2": ([sys.executable, "-m", "acpwire.fixtures.echo_agent"], []),
    "acpwire echo v1": ([sys.executable, "-m", "acpwire.fixtures.echo_agent"], ["--protocol", "1"]),
}
STATUS = {"pass": "pass", "**FAIL**": "fail", "n/a": "n/a"}
SHOWN_ROOT = "/path/to/acpwire"
"""How the README's sessions show the repository's root (the sessions' directory)."""


def readme_table() -> dict[str, dict[str, str]]:
    """The README's results: column -> row (rule, or "exit code") -> cell."""
    rows = [
        line
        for line in SECTION.splitlines()
        if line.startswith("| `") or line.startswith("| exit code")
    ]
    header = next(line for line in SECTION.splitlines() if line.startswith("| rule |"))
    columns = [cell.strip() for cell in header.strip("|").split("|")][1:]
    table: dict[str, dict[str, str]] = {column: {} for column in columns}
    for row in rows:
        name, *cells = [cell.strip() for cell in row.strip("|").split("|")]
        for column, cell in zip(columns, cells, strict=True):
            table[column][name.strip("`")] = cell
    return table


@pytest.mark.parametrize("column", COLUMNS)
def test_the_readme_table_is_what_the_checker_finds(column: str) -> None:
    command, options = COLUMNS[column]
    shown = readme_table()[column]
    done = subprocess.run(
        [*ACPWIRE, "check", "--format", "json", *options, "--", *command],
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


def test_the_readme_sessions_print_what_it_shows(tmp_path: Path) -> None:
    """Each `$` command of the section's console blocks, run by bash from the repository's
    root with `acpwire` and `python` this tree's, prints the lines shown after it."""
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    for name, run in (("acpwire", f"{sys.executable} -m acpwire"), ("python", sys.executable)):
        (bin_folder / name).write_text(f'#!/bin/sh\nexec {run} "$@"\n')
        (bin_folder / name).chmod(0o755)
    env = {**ENV, "PATH": f"{bin_folder}:{ENV['PATH']}"}
    sessions = re.findall(r"```console\n(.*?)```\n", SECTION, re.S)
    commands = [line for block in sessions for line in block.splitlines() if line.startswith("$ ")]
    assert len(commands) == 3
    for block in sessions:
        for command, shown in re.findall(r"^\$ (.*)\n((?:(?!\$ ).*\n)*)", block, re.M):
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.stdout.replace(str(ROOT), SHOWN_ROOT) == shown, command
