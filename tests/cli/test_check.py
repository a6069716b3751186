"""`acpwire check` as a process: acpwire's echo agent passes every rule (v2 and v1); a small
deliberately broken agent (tests/cli/broken_agent.py) is caught, one defect per rule family;
an agent without credentials makes the turn rules not applicable, never passed; an agent that
cannot start exits 8; every quote from the schema is verbatim in a description of schema/
(the spec pages are not in the repository: their quotes are checked against the pages when
the rules change, see the PR)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acpwire.cli.check import CheckExit
from acpwire.cli.check_rules import RULES, Family
from helpers.check_documents import V1_ONLY_NOT_APPLICABLE, check, failed, result_of, statuses
from helpers.commands import ACPWIRE, ECHO_AGENT, ENV, acpwire
from helpers.schema_quotes import assert_sources_quoted

BROKEN_AGENT = [sys.executable, str(Path(__file__).with_name("broken_agent.py"))]


def test_the_echo_agent_passes_every_v2_rule() -> None:
    code, document = check("--", *ECHO_AGENT)
    assert code == CheckExit.PASSED == 0, document
    assert document["protocolVersion"] == 2
    assert document["agent"].startswith("acpwire-echo ")
    assert set(statuses(document).values()) == {"pass"}
    assert [r["rule"] for r in document["results"]] == [rule.id for rule in RULES]


def test_the_echo_agent_passes_every_v1_rule() -> None:
    code, document = check("--protocol", "1", "--", *ECHO_AGENT)
    assert code == 0, document
    assert document["protocolVersion"] == 1
    seen = statuses(document)
    assert {r for r, s in seen.items() if s == "n/a"} == V1_ONLY_NOT_APPLICABLE
    assert {s for r, s in seen.items() if r not in V1_ONLY_NOT_APPLICABLE} == {"pass"}
    assert result_of(document, "turn.running")["reason"] == "a protocol v1 agent"


def test_the_text_table_rule_by_rule_with_the_failures_evidence() -> None:
    done = acpwire("check", "--", *BROKEN_AGENT, "unknown-method", timeout=120)
    assert done.returncode == CheckExit.RULE_FAILED == 7, done.stderr
    lines = done.stdout.splitlines()
    assert (
        lines[0]
        == f"acpwire check: {' '.join(BROKEN_AGENT)} unknown-method (broken-agent unknown-method, protocol v2)"
    )
    for family in Family:
        assert f"{family.value}:" in lines
    assert (
        "  FAIL  rpc.unknown-method            acpwire_check/no_such_method got error -32603 "
        "(Internal error)" in lines
    )
    failure = lines.index(
        "FAIL rpc.unknown-method: an unknown method is answered -32601 with the request's id (MUST)"
    )
    assert lines[failure + 1 : failure + 5] == [
        "  found: acpwire_check/no_such_method got error -32603 (Internal error)",
        '  schema ErrorCode -32601: "**Method not found**: The method does not exist or is not '
        'available."',
        '  -> {"jsonrpc":"2.0","id":2,"method":"acpwire_check/no_such_method","params":{}}',
        '  <- {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "Internal error"}}',
    ]
    assert lines[-1].startswith("25 passed, 2 failed, 0 not applicable")


def test_the_broken_agent_without_its_defect_passes_every_rule() -> None:
    code, document = check("--", *BROKEN_AGENT, "none")
    assert code == 0, document
    assert set(statuses(document).values()) == {"pass"}


DEFECTS = {
    # defect: (the rules it breaks, a line of the first rule's evidence)
    "version": ({"init.version-requested"}, '"protocolVersion": 3'),
    "capabilities": ({"caps.advertised-served"}, '"method":"session/delete"'),
    "user-message": ({"turn.user-message"}, '"result": {"messageId"'),
    "cancel": ({"turn.cancelled"}, '"stopReason": "end_turn"'),
    "close-order": ({"turn.close-order"}, '"stopReason": "cancelled"'),
    "unknown-method": ({"rpc.unknown-method", "caps.served-advertised"}, '"code": -32603'),
    "ids": ({"rpc.id-echoed"}, '"id": "4294967297"'),
    "parse-error": (
        {"input.parse-error", "input.invalid-request", "input.keeps-serving"},
        '"method": "session/new", ',
    ),
    "stdout": ({"input.stdout-clean"}, "broken agent starting"),
    "older-version": ({"init.version-older"}, '"protocolVersion": 2'),
    "no-running": ({"turn.running", "turn.requires-action"}, '"state": "idle"'),
    "no-requires-action": ({"turn.requires-action"}, "session/request_permission"),
    "no-stop-reason": (
        {"turn.idle-stop-reason", "turn.cancelled", "turn.close-order"},
        '"state": "idle"}',
    ),
    "stop-reason": ({"turn.stop-reason-known"}, '"stopReason": "done"'),
    "no-message-id": ({"turn.updates-fit"}, '"sessionUpdate": "agent_message_chunk"'),
    "after-cancel": ({"turn.nothing-after-cancelled"}, '"text": "one more"'),
    "answers-notifications": (
        {"rpc.notification-unanswered", "rpc.cancel-request"},
        '"id": null',
    ),
    "invalid-params": ({"rpc.invalid-params"}, '"code": -32603'),
    "proceeds": ({"turn.permission-refused"}, '"status": "in_progress"'),
    "unknown-approves": ({"turn.permission-refused"}, '"optionId":"acpwire-check-no-such-option"'),
}


@pytest.mark.parametrize("defect", DEFECTS)
def test_each_defect_of_the_broken_agent_is_caught(defect: str) -> None:
    rules, evidence = DEFECTS[defect]
    code, document = check("--", *BROKEN_AGENT, defect)
    assert code == CheckExit.RULE_FAILED, document
    assert failed(document) == rules
    first = min(rules, key=[r.id for r in RULES].index)
    assert any(evidence in line["line"] for line in result_of(document, first)["evidence"]), (
        result_of(document, first)
    )


def test_an_advertised_method_never_answered_fails_after_the_timeout_it_names() -> None:
    code, document = check("--timeout", "2", "--", *BROKEN_AGENT, "silent-delete")
    assert code == CheckExit.RULE_FAILED, document
    assert failed(document) == {"caps.advertised-served"}
    assert result_of(document, "caps.advertised-served")["reason"] == (
        "session/delete advertised, not answered within 2 s (--timeout)"
    )


def test_a_custom_stop_reason_beginning_with_an_underscore_passes_in_v2() -> None:
    code, document = check("--", *BROKEN_AGENT, "custom-stop-reason")
    assert code == 0, document
    assert result_of(document, "turn.stop-reason-known")["reason"] == (
        "stop reason '_paused' (a custom one: v2 allows `_`)"
    )


def test_each_refusal_is_answered_in_its_own_turn_and_named() -> None:
    _, document = check("--", *BROKEN_AGENT, "unknown-approves")
    found = result_of(document, "turn.permission-refused")
    assert found["reason"] == (
        "answered an optionId not offered, it reported the tool call 'in_progress'; answered "
        "the custom outcome `_acpwire_check_deferred`, it reported the tool call 'in_progress'"
    )
    answers = [e["line"] for e in found["evidence"] if e["toAgent"]]
    assert '"outcome":{"outcome":"_acpwire_check_deferred"}' in answers[1], answers


def test_the_close_order_failure_shows_the_close_response_before_the_idle() -> None:
    _, document = check("--", *BROKEN_AGENT, "close-order")
    found = result_of(document, "turn.close-order")
    assert found["reason"] == "the close response came before an idle `cancelled`"
    lines = [e["line"] for e in found["evidence"]]
    idle = next(i for i, line in enumerate(lines) if '"state": "idle"' in line)
    assert '"result": {}' in lines[idle - 1]  # evidence is in wire order: the answer came first
    assert found["sources"][0]["where"] == "schema v2 CloseSessionRequest"


def test_an_agent_without_credentials_makes_the_turn_rules_not_applicable() -> None:
    code, document = check("--", *BROKEN_AGENT, "no-credentials")
    assert code == 0, document
    not_applicable = {r["rule"]: r["reason"] for r in document["results"] if r["status"] == "n/a"}
    assert set(not_applicable) == {
        "turn.prompt-accepted",
        "turn.user-message",
        "turn.running",
        "turn.idle-stop-reason",
        "turn.requires-action",
        "turn.stop-reason-known",
        "turn.permission-refused",
        "turn.updates-fit",
        "turn.cancelled",
        "turn.nothing-after-cancelled",
        "turn.close-order",
    }
    assert set(not_applicable.values()) == {
        "session/prompt got error -32000 (Authentication required) "
        "(an agent without credentials often does)"
    }


def test_an_agent_that_cannot_start_exits_8() -> None:
    done = acpwire("check", "--", "/nonexistent/acpwire-check-agent")
    assert done.returncode == CheckExit.AGENT_NOT_STARTED == 8
    assert done.stdout == ""
    assert done.stderr == (
        "acpwire check: the agent could not be started: /nonexistent/acpwire-check-agent: "
        "No such file or directory\n"
    )


def test_an_agent_that_exits_before_initialize_exits_8_with_its_stderr() -> None:
    code = "import sys; print('no API key', file=sys.stderr); sys.exit(3)"
    done = acpwire("check", "--", sys.executable, "-c", code)
    assert done.returncode == 8
    assert done.stderr == (
        "acpwire check: the agent could not be started: the agent exited with code 3 before "
        "answering initialize; its stderr ended with:\n  no API key\n"
    )


def test_a_reader_that_stops_early_leaves_the_exit_code_to_the_verdict() -> None:
    done = subprocess.run(
        ["bash", "-c", 'set -o pipefail; "$@" | true', "-", *ACPWIRE, "check", "--", *ECHO_AGENT],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (0, "")


def test_an_agent_that_never_answers_initialize_fails_it_after_the_timeout() -> None:
    silent = "import time; time.sleep(60)"
    code, document = check("--timeout", "1", "--", sys.executable, "-c", silent)
    assert code == CheckExit.RULE_FAILED
    assert result_of(document, "init.answer")["reason"] == "initialize got no answer"
    assert failed(document) == {"init.answer"}
    assert {r["reason"] for r in document["results"] if r["status"] == "n/a"} == {
        "initialize failed"
    }


def test_an_agent_behind_a_shim_that_outlives_it_is_stopped_with_it() -> None:
    """As `npx -y <agent>`: the agent is the shim's child. Killing the shim alone left the
    agent holding its pipes, and the check waited for their end (here for 120 s)."""
    agent = [sys.executable, "-c", "import time; time.sleep(120)"]
    shim = f"import subprocess; subprocess.run({agent!r})"
    done = acpwire("check", "--format", "json", "--timeout", "1", "--", sys.executable, "-c", shim)
    assert done.returncode == CheckExit.RULE_FAILED, done.stderr
    assert failed(json.loads(done.stdout)) == {"init.answer"}


def test_the_command_line_is_checked() -> None:
    missing = acpwire("check")
    assert missing.returncode == 2
    assert "the agent command is missing" in missing.stderr
    negative = acpwire("check", "--timeout", "0", "--", *ECHO_AGENT)
    assert negative.returncode == 2
    assert "--timeout must be a positive number" in negative.stderr


def test_help_names_every_rule_and_exit_code() -> None:
    done = acpwire("check", "--help")
    assert done.returncode == 0
    for rule in RULES:
        assert f"  {rule.id:<29} {rule.title}" in done.stdout
    for code in CheckExit:
        assert f"  {int(code):>3}  " in done.stdout
    for option in ("--protocol", "--format", "--timeout", "--cwd"):
        assert option in done.stdout
    assert "check" in acpwire("--help").stdout


@pytest.mark.parametrize("rule", RULES, ids=[rule.id for rule in RULES])
def test_every_schema_quote_is_verbatim_and_every_spec_source_names_page_and_section(
    rule: Any,
) -> None:
    assert_sources_quoted(rule)
