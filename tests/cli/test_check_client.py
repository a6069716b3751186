"""`acpwire check --client` as a process: a small deliberately broken client
(tests/cli/broken_client.py) passes every rule without its defect, in each way of meeting the
scripted agent (the relay of `{agent}`, the client's own stdio, an editor given the printed
agent command), and each defect is caught, one per rule family; a client that cannot start,
or never starts its agent, exits 8; every schema quote of the client rules is verbatim."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from acpwire.cli.check import CheckExit
from acpwire.cli.check_client_rules import CLIENT_RULES
from acpwire.cli.check_rules import Family
from helpers.check_documents import check, failed, result_of, statuses
from helpers.commands import ACPWIRE, ENV, acpwire
from helpers.schema_quotes import assert_sources_quoted

BROKEN_CLIENT = [sys.executable, str(Path(__file__).with_name("broken_client.py"))]
V1_ONLY = {"caps.advertised-served", "caps.served-advertised"}


def check_client(*args: str, options: tuple[str, ...] = ()) -> tuple[int, dict[str, Any]]:
    """`acpwire check --client --format json OPTIONS -- ARGS`: the exit code and the document."""
    return check("--client", *options, "--", *args)


def test_a_correct_v2_client_passes_every_rule_through_the_relay() -> None:
    code, document = check_client(*BROKEN_CLIENT, "none", "--", "{agent}")
    assert code == CheckExit.PASSED == 0, document
    assert (document["protocolVersion"], document["client"]) == (2, "broken-client none")
    seen = statuses(document)
    assert [r["rule"] for r in document["results"]] == [rule.id for rule in CLIENT_RULES]
    assert {r for r, s in seen.items() if s == "n/a"} == V1_ONLY
    assert {s for r, s in seen.items() if r not in V1_ONLY} == {"pass"}
    assert result_of(document, "caps.advertised-served")["reason"] == "a protocol v2 client"
    assert result_of(document, "turn.permission-cancelled")["reason"] == (
        "the permission request after session/cancel got outcome 'cancelled'"
    )


def test_a_correct_v1_client_passes_every_rule() -> None:
    code, document = check_client(*BROKEN_CLIENT, "none", "--v1", "--", "{agent}")
    assert code == 0, document
    assert document["protocolVersion"] == 1
    assert set(statuses(document).values()) == {"pass"}


def test_a_client_speaking_on_its_own_stdio_is_checked_there() -> None:
    code, document = check_client(*BROKEN_CLIENT, "none")
    assert code == 0, document
    assert {s for r, s in statuses(document).items() if r not in V1_ONLY} == {"pass"}


def test_an_agent_command_inside_an_argument_is_quoted_for_a_shell() -> None:
    script = f"{' '.join(BROKEN_CLIENT)} none -- {{agent}}"
    code, document = check_client("bash", "-c", script)
    assert code == 0, document


def test_an_agent_command_inside_an_option_is_substituted() -> None:
    """`--agent={agent}`: the placeholder inside an argument is replaced, by the agent command
    as one shell-quoted string (the client splits it)."""
    code, document = check_client(*BROKEN_CLIENT, "none", "--agent={agent}")
    assert code == 0, document
    assert document["client"] == "broken-client none"


def test_without_a_client_command_it_prints_the_agent_command_and_waits() -> None:
    checker = subprocess.Popen(
        [*ACPWIRE, "check", "--client", "--format", "json"],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert checker.stderr is not None
    assert (
        checker.stderr.readline()
        == "acpwire check --client: waiting for a client; its agent command:\n"
    )
    agent_command = checker.stderr.readline().strip()
    assert " -m acpwire check --client --serve " in agent_command
    editor = subprocess.run(
        ["bash", "-c", f"{' '.join(BROKEN_CLIENT)} none -- {agent_command}"],
        env=ENV,
        capture_output=True,
        timeout=120,
    )
    assert editor.returncode == 0, editor.stderr
    out, _ = checker.communicate(timeout=60)
    assert checker.returncode == 0
    assert json.loads(out)["client"] == "broken-client none"


def test_the_text_table_with_the_failures_evidence() -> None:
    done = acpwire("check", "--client", "--", *BROKEN_CLIENT, "unknown-method", "--", "{agent}")
    assert done.returncode == CheckExit.RULE_FAILED == 7, done.stderr
    lines = done.stdout.splitlines()
    command = " ".join(BROKEN_CLIENT)
    assert lines[0] == (
        f"acpwire check --client: {command} unknown-method -- {{agent}} "
        "(broken-client unknown-method, protocol v2)"
    )
    for family in Family:
        assert f"{family.value}:" in lines
    failure = lines.index(
        "FAIL rpc.unknown-method: an agent request of an unknown method is answered -32601 with "
        "the request's id (MUST)"
    )
    assert lines[failure + 1 : failure + 5] == [
        "  found: acpwire_check/no_such_method got error -32603 (Method not found: "
        "acpwire_check/no_such_method)",
        '  schema ErrorCode -32601: "**Method not found**: The method does not exist or is not '
        'available."',
        '  -> {"jsonrpc":"2.0","id":2,"method":"acpwire_check/no_such_method","params":{}}',
        '  <- {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "Method not found: '
        'acpwire_check/no_such_method"}}',
    ]
    assert lines[-1].startswith("12 passed, 1 failed, 2 not applicable")


DEFECTS = {
    # defect: (its options, the rules it breaks, a line of the first rule's evidence)
    "no-initialize": ((), {"init.initialize-first"}, '"method": "session/new"'),
    "init-params": ((), {"init.params-fit"}, '"method": "initialize"'),
    "capabilities": (("--v1",), {"caps.advertised-served"}, '"method":"fs/read_text_file"'),
    "bad-params": ((), {"turn.requests-fit"}, '"cwd": 42'),
    "reads-late": ((), {"turn.reads-updates"}, '"sessionUpdate":"agent_message_chunk"'),
    "permission-option": ((), {"turn.permission-answer"}, '"optionId": "maybe"'),
    "permission-after-cancel": (
        (),
        {"turn.permission-cancelled"},
        '"method": "session/cancel"',
    ),
    "unknown-method": ((), {"rpc.unknown-method"}, '"code": -32603'),
    "ids": ((), {"rpc.id-echoed", "rpc.answered-once"}, '"id": "4294967297"'),
    "twice": ((), {"rpc.answered-once", "rpc.cancel-request"}, '"id": 1'),
    "answers-notifications": (
        (),
        {"rpc.notification-unanswered", "rpc.cancel-request", "rpc.answered-once"},
        '"id": null',
    ),
    "reuse-id": (("--v1",), {"rpc.ids-unique"}, '"method": "session/list"'),
    "stdout": ((), {"input.lines-clean"}, "broken client starting"),
}


@pytest.mark.parametrize("defect", DEFECTS)
def test_each_defect_of_the_broken_client_is_caught(defect: str) -> None:
    options, rules, evidence = DEFECTS[defect]
    timeout = ("--timeout", "1") if defect == "reads-late" else ()
    code, document = check_client(
        *BROKEN_CLIENT, defect, *options, "--", "{agent}", options=timeout
    )
    assert code == CheckExit.RULE_FAILED, document
    assert failed(document) == rules
    first = min(rules, key=[r.id for r in CLIENT_RULES].index)
    lines = [line["line"] for line in result_of(document, first)["evidence"]]
    assert any(evidence in line for line in lines), result_of(document, first)


def test_a_client_that_stops_reading_ends_the_run_there() -> None:
    _, document = check_client(
        *BROKEN_CLIENT, "reads-late", "--", "{agent}", options=("--timeout", "1")
    )
    assert result_of(document, "turn.reads-updates")["reason"] == (
        "3000 updates and a request not taken or answered within 1 s: the client stopped reading"
    )
    assert result_of(document, "rpc.unknown-method")["reason"] == "the client stopped reading"


LINGERER = [
    sys.executable,
    "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(30)",
]
"""A client that ignores the end of its connection and SIGTERM, holding what it inherited."""


@pytest.mark.parametrize(
    "client",
    [
        # on its own stdio: says nothing, so the run ends after the timeout's silence
        f"{shlex.join(LINGERER)}; exit $?",
        # through the relay: a correct run, then the wrapper's python lingers
        f"{shlex.join(BROKEN_CLIENT)} none -- {{agent}}; {shlex.join(LINGERER)}",
    ],
    ids=["stdio", "relay"],
)
def test_a_client_behind_a_shell_wrapper_is_stopped_with_it(client: str) -> None:
    """As `npx <client>` or a shell script: the client is the wrapper's child. Killing the
    wrapper alone left the client holding the checker's stderr (and on stdio the agent's
    pipes), and the check did not end for the 30 s the client lingers."""
    started = time.monotonic()
    done = acpwire(
        "check",
        "--client",
        "--format",
        "json",
        "--timeout",
        "1",
        "--",
        "sh",
        "-c",
        client,
        timeout=20,
    )
    assert time.monotonic() - started < 15, done.stderr
    assert json.loads(done.stdout)["results"], done.stderr


def test_a_client_that_cannot_start_exits_8() -> None:
    done = acpwire("check", "--client", "--", "/nonexistent/acpwire-check-client", "{agent}")
    assert done.returncode == CheckExit.AGENT_NOT_STARTED == 8
    assert done.stdout == ""
    assert done.stderr == (
        "acpwire check --client: the client could not be started: "
        "/nonexistent/acpwire-check-client: No such file or directory\n"
    )


def test_a_client_that_never_starts_its_agent_exits_8() -> None:
    done = acpwire("check", "--client", "--", sys.executable, "-c", "pass", "{agent}")
    assert done.returncode == 8
    assert done.stderr == (
        "acpwire check --client: the client could not be started: the client exited with code "
        "0 without starting its agent (is `{agent}` where the client command takes the agent "
        "command?)\n"
    )


def test_serve_goes_with_client_only() -> None:
    done = acpwire("check", "--serve", "/tmp/x.sock")
    assert done.returncode == 2
    assert "--serve SOCKET goes with --client and no command" in done.stderr


def test_help_names_every_client_rule() -> None:
    done = acpwire("check", "--help")
    assert "rules of --client:" in done.stdout
    for rule in CLIENT_RULES:
        assert f"  {rule.id:<29} {rule.title}" in done.stdout
    for option in ("--client", "--serve", "{agent}"):
        assert option in done.stdout


@pytest.mark.parametrize("rule", CLIENT_RULES, ids=[rule.id for rule in CLIENT_RULES])
def test_every_client_rule_quotes_the_schema_verbatim(rule: Any) -> None:
    assert_sources_quoted(rule)
