"""`acpwire check` against the official SDKs' agents of the interop tests (tests/interop/README.md:
TypeScript `@agentclientprotocol/sdk` 2.4.0 v2 and v1, Python `agent-client-protocol` 0.12.1 v1,
over stdio and, served by the SDKs' remote servers, over WebSocket with `--url`) and acpwire's
echo agent: the results are the README's table ("acpwire check"), rule by rule,
and the README's sessions print what it shows. Fails (never skips) when node +
tests/interop/ts/node_modules or the Python SDK are missing: `nox -s tests` installs them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers.check_documents import serving
from helpers.paths import INTEROP
from helpers.readme_tables import (
    assert_column_found,
    console_sessions,
    fail_without_interop_peers,
    readme_section,
    results_table,
)

fail_without_interop_peers()

SECTION = readme_section("acpwire check")
COLUMNS = {
    # the table's column: the agent command (from the repository's root), its options
    "TS SDK v2": (["node", "tests/interop/ts/agent_v2.mjs"], []),
    "TS SDK v1": (["node", "tests/interop/ts/agent_v1.mjs"], []),
    "Python SDK v1": ([sys.executable, "tests/interop/py/agent_v1.py"], []),
    "acpwire echo v2": ([sys.executable, "-m", "acpwire.fixtures.echo_agent"], []),
    "acpwire echo v1": ([sys.executable, "-m", "acpwire.fixtures.echo_agent"], ["--protocol", "1"]),
}


REMOTE_COLUMNS = {
    # the column: the server command (from tests/interop; it prints {"url": ...} and serves
    # until its stdin closes), the options of `acpwire check --url URL`
    "TS SDK v2 WebSocket": (["node", "ts/remote_agent.mjs"], []),
    "TS SDK v1 WebSocket": (["node", "ts/remote_agent.mjs"], ["--protocol", "1"]),
    "Python SDK v1 WebSocket": ([sys.executable, "py/remote_agent_v1.py"], []),
}


@pytest.mark.parametrize("column", COLUMNS)
def test_the_readme_table_is_what_the_checker_finds(column: str) -> None:
    command, options = COLUMNS[column]
    assert_column_found(results_table(SECTION)[column], [*options, "--", *command])


@pytest.mark.parametrize("column", REMOTE_COLUMNS)
def test_the_readme_table_over_websocket_is_what_the_checker_finds(column: str) -> None:
    command, options = REMOTE_COLUMNS[column]
    with serving(command, cwd=INTEROP) as url:
        assert_column_found(results_table(SECTION)[column], [*options, "--url", url])


def test_the_readme_sessions_print_what_it_shows(tmp_path: Path) -> None:
    """Each `$` command of the section's console blocks prints the lines shown after it."""
    sessions = console_sessions(SECTION, tmp_path / "bin")
    assert len(sessions) == 3
    for command, shown, printed in sessions:
        assert printed == shown, command
