"""`acpwire check --format json` run as a process, and its document read: the exit code, each
rule's status, result and the failures (tests/cli/test_check*.py); `serving` a remote agent
for `--url`."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from helpers.commands import ENV, acpwire

V1_ONLY_NOT_APPLICABLE = {
    "turn.user-message",
    "turn.running",
    "turn.idle-stop-reason",
    "turn.requires-action",
    "turn.close-order",
    "input.close-unknown-session",
}
"""The rules a protocol v1 agent leaves not applicable (v2 only)."""


def check(*args: str) -> tuple[int, dict[str, Any]]:
    """`acpwire check --format json ARGS`: the exit code and the document."""
    done = acpwire("check", "--format", "json", *args, timeout=120)
    assert done.stdout, f"exit {done.returncode}, no output; stderr:\n{done.stderr}"
    document: dict[str, Any] = json.loads(done.stdout)
    assert document["exitCode"] == done.returncode
    return done.returncode, document


def statuses(document: dict[str, Any]) -> dict[str, str]:
    return {result["rule"]: result["status"] for result in document["results"]}


def result_of(document: dict[str, Any], rule_id: str) -> dict[str, Any]:
    return next(r for r in document["results"] if r["rule"] == rule_id)


def failed(document: dict[str, Any]) -> set[str]:
    return {rule for rule, status in statuses(document).items() if status == "fail"}


@contextmanager
def serving(command: list[str], cwd: Path | None = None) -> Iterator[str]:
    """A remote agent's server process (run in `cwd`); yields the URL its first line names
    (`{"url": ...}`). Leaving closes its stdin (the interop servers and broken_remote_agent.py
    stop then) and terminates it (acpwire's `--serve` stops on SIGTERM)."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=ENV,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        first = process.stdout.readline()
        assert first, f"{command} printed no URL (exit {process.poll()})"
        yield str(json.loads(first)["url"])
    finally:
        process.stdin.close()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
