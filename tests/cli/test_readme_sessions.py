"""The README's sessions with the `acpwire` command ("The acpwire command") print what it
shows: each `$` command run by bash, in order, in one directory (`acpwire` and `python` being
this tree's), stdout and stderr together, compared with the README once what changes from run
to run is masked (session ids, dates, times). A command followed by `# the list at its end`
is compared on the lines the README shows of its end. The one interactive command (asking on
the terminal) is tested with a pty in test_run.py."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from helpers.commands import ENV
from helpers.paths import ROOT
from helpers.traces import broken_trace

SECTION = (ROOT / "README.md").read_text().split("\n## The acpwire command\n", 1)[1]
SECTION = SECTION.split("\n## ", 1)[0]
SECTION = SECTION.split("\n### acpwire check\n", 1)[0]  # its sessions: test_check_sdk_agents.py
CONSOLE_BLOCK = re.compile(r"```console\n(.*?)```\n", re.S)
ASKS_ON_THE_TERMINAL = 'acpwire run "Hi" -- python -m acpwire.examples.hello_agent'
TAIL = "# the list at its end"
MASKS = (
    (re.compile(r"sess_[0-9a-f]{32}"), "sess_<id>"),
    (re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+Z"), "<date>"),
    (re.compile(r"\d+(\.\d+)? (s|ms|µs)\b"), "<duration>"),
    (re.compile(r"\d+\.\d+"), "<number>"),
)


def masked(text: str) -> str:
    for pattern, mask in MASKS:
        text = pattern.sub(mask, text)
    return text


def sessions() -> list[tuple[str, list[str]]]:
    """(command, the lines shown after it), in README order."""
    shown: list[tuple[str, list[str]]] = []
    for block in CONSOLE_BLOCK.findall(SECTION):
        for line in block.splitlines():
            if line.startswith("$ "):
                shown.append((line[2:], []))
            else:
                shown[-1][1].append(line)
    return shown


def shims(folder: Path) -> dict[str, str]:
    """`acpwire` and `python` on PATH as a user has them: this interpreter, this tree."""
    folder.mkdir()
    for name, run in (("acpwire", f"{sys.executable} -m acpwire"), ("python", sys.executable)):
        shim = folder / name
        shim.write_text(f'#!/bin/sh\nexec {run} "$@"\n')
        shim.chmod(0o755)
    return {**ENV, "PATH": f"{folder}:{ENV['PATH']}", "COLUMNS": "200"}


def test_the_readme_sessions_print_what_it_shows(tmp_path: Path) -> None:
    shown = sessions()
    commands = [command for command, _ in shown]
    assert [command.split()[:2] for command in commands] == [
        ["acpwire", "run"],
        ["acpwire", "run"],
        ["printf", "'one\\ntwo\\n'"],
        ["acpwire", "run"],
        ["head", "-3"],
        ["tail", "-1"],
        ["acpwire", "show"],
        ["acpwire", "show"],
        ["acpwire", "show"],
        ["acpwire", "replay"],
        ["acpwire", "replay"],
        ["acpwire", "run"],
    ], "a session added to the README: check it here"
    env = shims(tmp_path / "bin")
    work = tmp_path / "work"
    work.mkdir()
    broken_trace(work / "broken.trace")
    for command, expected in shown:
        if command == ASKS_ON_THE_TERMINAL:
            continue
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
        )
        assert done.returncode in (0, 141), f"{command}\n{done.stdout}"  # 141: `| head`
        output = done.stdout.splitlines()
        if command.endswith(TAIL):
            output = output[-len(expected) :]
        assert [masked(line) for line in output] == [masked(line) for line in expected], command
