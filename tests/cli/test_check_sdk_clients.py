"""`acpwire check --client` against the official SDKs' example clients of the interop tests
(tests/interop/README.md: TypeScript `@agentclientprotocol/sdk` 2.4.0 v2 and v1, Python
`agent-client-protocol` 0.12.1 v1) and acpwire's fixture client: the results are the README's
table ("acpwire check --client"), rule by rule, and the README's sessions print what it
shows. Fails (never skips) when node + tests/interop/ts/node_modules or the Python SDK are
missing: `nox -s tests` installs them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers.readme_tables import (
    assert_column_found,
    console_sessions,
    fail_without_interop_peers,
    readme_section,
    results_table,
)

fail_without_interop_peers()

SECTION = readme_section("acpwire check --client")
COLUMNS = {
    # the table's column: the client command (from the repository's root)
    "TS SDK v2": ["node", "tests/interop/ts/client_v2.mjs", "--", "{agent}"],
    "TS SDK v1": ["node", "tests/interop/ts/client_v1.mjs", "--", "{agent}"],
    "Python SDK v1": [sys.executable, "tests/interop/py/client_v1.py", "--", "{agent}"],
    "acpwire client v2": [sys.executable, "-m", "acpwire.fixtures.client", "--", "{agent}"],
    "acpwire client v1": [
        *(sys.executable, "-m", "acpwire.fixtures.client", "--protocol", "1", "--", "{agent}")
    ],
}


@pytest.mark.parametrize("column", COLUMNS)
def test_the_readme_table_is_what_the_checker_finds(column: str) -> None:
    shown = results_table(SECTION)[column]
    assert_column_found(shown, ["--client", "--", *COLUMNS[column]])


def test_the_readme_sessions_print_what_it_shows(tmp_path: Path) -> None:
    """Each `$` command of the section's console blocks prints the lines shown after it."""
    sessions = console_sessions(SECTION, tmp_path / "bin")
    assert len(sessions) == 2
    for command, shown, printed in sessions:
        assert printed == shown, command
