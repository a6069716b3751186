"""`acpwire check --url` as a process, against agents served over WebSocket: acpwire's echo agent
(`echo_agent --serve`: `agent_app` under `serve_remote`) passes every rule that applies (v2
and v1), the stdio rule not applicable; broken_agent.py served over WebSocket
(broken_remote_agent.py) is caught, one defect per rule family; an endpoint that cannot be
reached exits 8 naming it; headers are sent; the command line is checked."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from acpwire.cli.check import CheckExit
from acpwire.cli.check_rules import RULES
from helpers.check_documents import (
    V1_ONLY_NOT_APPLICABLE,
    check,
    failed,
    result_of,
    serving,
    statuses,
)
from helpers.commands import ECHO_AGENT, acpwire

BROKEN_REMOTE_AGENT = [sys.executable, "-m", "cli.broken_remote_agent"]  # in TESTS: `helpers`
TESTS = Path(__file__).parents[1]
STDIO_ONLY = "input.stdout-clean"


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    with serving([*ECHO_AGENT, "--serve", "127.0.0.1:0"]) as url:
        yield url


@pytest.fixture(scope="module")
def broken_url() -> Iterator[str]:
    with serving(BROKEN_REMOTE_AGENT, cwd=TESTS) as url:
        yield url


def test_the_echo_agent_passes_every_v2_rule_over_websocket(echo_url: str) -> None:
    code, document = check("--url", echo_url)
    assert code == CheckExit.PASSED, document
    assert (document["protocolVersion"], document["command"]) == (2, ["--url", echo_url])
    assert document["agent"].startswith("acpwire-echo ")
    seen = statuses(document)
    assert [r.id for r in RULES] == list(seen)
    assert {r for r, s in seen.items() if s != "pass"} == {STDIO_ONLY}
    assert result_of(document, STDIO_ONLY)["status"] == "n/a"
    assert result_of(document, STDIO_ONLY)["reason"].startswith("a rule of the stdio transport")


def test_the_echo_agent_passes_every_v1_rule_over_websocket(echo_url: str) -> None:
    code, document = check("--protocol", "1", "--url", echo_url.replace("http://", "ws://"))
    assert code == CheckExit.PASSED, document
    assert document["protocolVersion"] == 1
    seen = statuses(document)
    assert {r for r, s in seen.items() if s == "n/a"} == {*V1_ONLY_NOT_APPLICABLE, STDIO_ONLY}
    assert {s for r, s in seen.items() if s != "n/a"} == {"pass"}


def test_the_text_table_names_the_url(echo_url: str) -> None:
    done = acpwire("check", "--url", echo_url, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith(f"acpwire check: --url {echo_url} (acpwire-echo ")


def test_the_broken_agent_without_its_defect_passes_every_rule_over_websocket(
    broken_url: str,
) -> None:
    code, document = check("--url", f"{broken_url}/none")
    assert code == CheckExit.PASSED, document
    assert {r for r, s in statuses(document).items() if s != "pass"} == {STDIO_ONLY}


REMOTE_DEFECTS = {
    # one defect per rule family: (the rules it breaks, a line of the first rule's evidence)
    "version": ({"init.version-requested"}, '"protocolVersion": 3'),
    "older-version": ({"init.version-older"}, '"protocolVersion": 2'),
    "capabilities": ({"caps.advertised-served"}, '"method":"session/delete"'),
    "user-message": ({"turn.user-message"}, '"result": {"messageId"'),
    "cancel": ({"turn.cancelled"}, '"stopReason": "end_turn"'),
    "unknown-method": ({"rpc.unknown-method", "caps.served-advertised"}, '"code": -32603'),
    "ids": ({"rpc.id-echoed"}, '"id": "4294967297"'),
    "parse-error": (
        {"input.parse-error", "input.invalid-request", "input.keeps-serving"},
        '"method": "session/new", ',
    ),
}


@pytest.mark.parametrize("defect", REMOTE_DEFECTS)
def test_each_family_has_a_defect_caught_over_websocket(broken_url: str, defect: str) -> None:
    rules, evidence = REMOTE_DEFECTS[defect]
    code, document = check("--url", f"{broken_url}/{defect}")
    assert code == CheckExit.RULE_FAILED, document
    assert failed(document) == rules
    first = min(rules, key=[r.id for r in RULES].index)
    lines = result_of(document, first)["evidence"]
    assert any(evidence in line["line"] for line in lines), lines


def test_an_agent_gone_after_bad_input_closed_the_connection(broken_url: str) -> None:
    _, document = check("--url", f"{broken_url}/parse-error")
    assert result_of(document, "input.keeps-serving")["reason"] == (
        "the next request got no answer (the agent closed the connection)"
    )


def test_a_stdout_defect_is_not_applicable_over_websocket(broken_url: str) -> None:
    """broken_agent.py's log line on stdout becomes a text frame: the stdio rule does not
    apply to a remote agent, so it is n/a, not a pass."""
    code, document = check("--url", f"{broken_url}/stdout")
    assert code == CheckExit.PASSED, document
    assert result_of(document, STDIO_ONLY)["status"] == "n/a"


def test_an_endpoint_that_cannot_be_reached_exits_8() -> None:
    done = acpwire("check", "--url", "ws://127.0.0.1:9/acp")
    assert done.returncode == CheckExit.AGENT_NOT_STARTED == 8
    assert done.stdout == ""
    assert done.stderr.startswith(
        "acpwire check: the agent at ws://127.0.0.1:9/acp: cannot connect: "
    )


def test_an_endpoint_that_refuses_the_upgrade_exits_8_with_its_status(echo_url: str) -> None:
    done = acpwire("check", "--url", echo_url.replace("/acp", "/elsewhere"))
    assert done.returncode == 8
    assert done.stderr.startswith("acpwire check: the agent at "), done.stderr
    assert "refused the WebSocket upgrade: 404" in done.stderr, done.stderr


def test_an_agent_that_ends_the_connection_before_initialize_exits_8(broken_url: str) -> None:
    """broken_agent.py exits at once on a defect it does not know: the relay closes the
    socket."""
    done = acpwire("check", "--url", f"{broken_url}/no-such-defect")
    assert (done.returncode, done.stdout) == (8, "")
    assert done.stderr == (
        f"acpwire check: the agent at {broken_url}/no-such-defect ended the connection before "
        "answering initialize: the server closed the WebSocket (code 1000: '')\n"
    )


def test_headers_are_sent_when_connecting() -> None:
    """A server that refuses connections without the right bearer token (`RemoteOptions
    .authorize`) is checked once the header is given."""
    token_server = [sys.executable, str(Path(__file__).with_name("token_echo_agent.py"))]
    with serving(token_server) as url:
        refused = acpwire("check", "--url", url)
        assert refused.returncode == 8 and "401" in refused.stderr, refused.stderr
        code, document = check("--url", url, "--header", "Authorization: Bearer sesame")
    assert code == CheckExit.PASSED, document


def test_the_remote_command_line_is_checked() -> None:
    both = acpwire("check", "--url", "ws://127.0.0.1:9/acp", "--", *ECHO_AGENT)
    assert both.returncode == 2 and "not both" in both.stderr
    header = acpwire("check", "--header", "X-A: b", "--", *ECHO_AGENT)
    assert header.returncode == 2 and "go with --url" in header.stderr
    malformed = acpwire("check", "--url", "ws://127.0.0.1:9/acp", "--header", "nocolon")
    assert malformed.returncode == 2 and "NAME:VALUE" in malformed.stderr
    relative = acpwire("check", "--url", "ws://127.0.0.1:9/acp", "--cwd", "here")
    assert relative.returncode == 2 and "absolute path" in relative.stderr
    client = acpwire("check", "--client", "--url", "ws://127.0.0.1:9/acp")
    assert client.returncode == 2 and "--url is for a remote agent" in client.stderr
    helped = acpwire("check", "--help").stdout
    for option in ("--url", "--transport", "--header"):
        assert option in helped
