"""`acpwire show` as a process: real sessions recorded by `acpwire trace` (the echo agent on
v2 and v1, the examples' agents), and a hand-written trace breaking each rule `show` checks,
each finding marked at its line; the HTML page in a real headless Chromium."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers.commands import ACPWIRE, ECHO_AGENT, ENV, HELLO_AGENT, TOOL_AGENT, acpwire, agent
from helpers.traces import broken_trace, expected_findings

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def recorded(tmp_path: Path, agent: list[str], *run_args: str, prompt: str = "Hello") -> Path:
    """A trace of `acpwire run` against `agent` through `acpwire trace`."""
    trace = tmp_path / "session.trace"
    tapped = [*ACPWIRE, "trace", "--out", str(trace), "--", *agent]
    done = acpwire("run", "--approve", "all", *run_args, prompt, "--", *tapped)
    assert done.returncode == 0, done.stderr
    return trace


def show(*args: str) -> subprocess.CompletedProcess[str]:
    done = acpwire("show", *args, env={"COLUMNS": "200"})  # rich's width: rows unwrapped
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.parametrize("protocol", ["2", "1"])
def test_an_echo_session_told_without_findings(tmp_path: Path, protocol: str) -> None:
    trace = recorded(tmp_path, ECHO_AGENT, "--protocol", protocol)
    out = show(str(trace)).stdout
    assert f"protocol v{protocol}" in out
    assert "agent acpwire-echo" in out
    assert "Session sess_1 (new, at" in out
    assert "Turn 1 'Hello': end_turn · duration" in out
    kind = " (other)" if protocol == "2" else ""  # the v1 echo gives no kind
    assert f"tool call Echo the prompt{kind}: pending → in_progress → completed" in out
    assert (
        "permission 'Echo the prompt' [Allow (allow_once), Reject (reject_once)] → allow" in out
        or (
            "permission 'Echo the prompt back?' [Allow (allow_once), Reject (reject_once)] → allow"
            in out
        )
    )
    if protocol == "2":
        assert "states: running" in out and "idle (end_turn)" in out
    assert "Findings (0)" in out
    assert "session/prompt #2: Hello" in out  # the timeline


def test_the_examples_sessions(tmp_path: Path) -> None:
    hello = show(str(recorded(tmp_path, HELLO_AGENT))).stdout
    assert "Turn 1 'Hello': end_turn" in hello
    assert "3 × agent_message_chunk: Hello from acpwire!" in hello  # a run of chunks, one row
    assert "Findings (0)" in hello
    tool = show(str(recorded(tmp_path, TOOL_AGENT))).stdout
    assert "tool call Append to notes.txt (edit): pending → in_progress → completed" in tool
    assert "Findings (0)" in tool


def test_each_broken_rule_is_found_at_its_line(tmp_path: Path) -> None:
    out = show(str(broken_trace(tmp_path / "broken.trace"))).stdout
    findings = out.split("Findings (", 1)[1]
    assert findings.startswith(f"{len(expected_findings())})")
    listed = [item for item in findings.splitlines()[1:] if item.strip()]
    assert len(listed) == len(expected_findings())
    for (number, finding), item in zip(expected_findings(), listed, strict=True):
        assert item.startswith(f"  line {number} at "), item
        level, rest = finding.split(" ", 1)
        assert f": {level} {rest.split(':')[0]}: " in item, item
        assert rest.split(": ", 1)[1] in item, item
    assert "Turn 1 'hi': no stop reason" not in out  # turn 1 ended (without a stop reason)
    assert "Turn 2 'hi': paused" in out
    assert "Turn 3 'hi': end_turn" in out
    assert "✗ MUST v2 lifecycle: output before `state_update` running" in out  # in the timeline


def test_the_html_page_in_headless_chromium(tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    assert chromium, (
        "the HTML view is tested in a real browser: install Debian's chromium "
        "(`apt-get install chromium`; .ci/run does)"
    )
    page = tmp_path / "broken.html"
    show(str(broken_trace(tmp_path / "broken.trace")), "--html", str(page))
    source = page.read_text()
    assert not re.search(r"<(script|link|img|iframe)\b|\b(src|href)=\"(?!#)|url\(", source), (
        "the page must load nothing: no script, stylesheet, image or link out"
    )
    browser = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(
        [*browser, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert f'id="finding-count">{len(expected_findings())} findings</span>' in dom.stdout
    for number, finding in expected_findings():
        row = re.search(f'<tr class="[^"]*" id="line-{number}">(.*?)</tr>', dom.stdout, re.S)
        assert row, f"no timeline row for line {number}"
        assert html.escape("✗ " + finding.split(": ")[0]) in row.group(1)
        assert f'<a href="#line-{number}">line {number}</a>' in dom.stdout
    assert 'Turn 2</a> <q>hi</q>: <span class="stop">paused</span>' in dom.stdout
    shot = tmp_path / "page.png"
    shown = subprocess.run(
        [*browser, f"--screenshot={shot}", "--window-size=1200,900", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_json_lines_that_are_not_messages_are_recorded_and_marked(tmp_path: Path) -> None:
    trace = tmp_path / "odd.trace"
    odd = agent("print('null'); print('[1, 2]'); print('{}')")
    tapped = acpwire("trace", "--out", str(trace), "--", *odd)
    assert tapped.returncode == 0, tapped.stderr
    assert tapped.stdout == "null\n[1, 2]\n{}\n"
    out = show(str(trace), "--no-timeline").stdout
    findings = out.split("Findings (3)\n", 1)[1].splitlines()
    assert [item.split(": ", 2)[-1] for item in findings] == [
        "not a JSON-RPC message",  # null: recorded as a line, not lost
        "not a JSON-RPC message",
        "neither a request nor a response",
    ]


def test_html_to_stdout(tmp_path: Path) -> None:
    out = show(str(broken_trace(tmp_path / "broken.trace")), "--html", "-").stdout
    assert out.startswith("<!DOCTYPE html>")


def test_no_timeline(tmp_path: Path) -> None:
    out = show(str(broken_trace(tmp_path / "broken.trace")), "--no-timeline").stdout
    assert "Timeline" not in out and "Findings (" in out


def test_without_rich_the_terminal_view_names_the_extra(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow" / "rich"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ModuleNotFoundError('no rich here', name='rich')\n")
    env = {**ENV, "PYTHONPATH": f"{shadow.parent}:{ENV['PYTHONPATH']}"}
    trace = str(broken_trace(tmp_path / "broken.trace"))
    done = subprocess.run(
        [*ACPWIRE, "show", trace], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 2
    assert "needs rich (the `cli` extra): pip install 'acpwire[cli]'" in done.stderr
    page = subprocess.run(
        [*ACPWIRE, "show", trace, "--html", "-"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert page.returncode == 0 and page.stdout.startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"hello\n", "not an acpwire trace: its first line is not JSON"),
        (
            b'{"format": "other"}\n',
            "not an acpwire trace: its first line has no 'acpwire_trace' key",
        ),
        (b'{"acpwire_trace": 2}\n', "a trace of format version 2: this acpwire reads version 1"),
        (b'{"acpwire_trace": 1}\n[1, 2]\n', "line 2 is not a trace record"),
    ],
)
def test_a_file_that_is_not_a_trace(tmp_path: Path, content: bytes, says: str) -> None:
    path = tmp_path / "x.trace"
    path.write_bytes(content)
    done = acpwire("show", str(path))
    assert done.returncode == 2
    assert says in done.stderr


def test_help_is_complete() -> None:
    done = acpwire("show", "--help")
    assert done.returncode == 0
    for words in ("FILE", "--html PAGE", "--no-timeline", "v2 prompt", "acpwire[cli]"):
        assert words in done.stdout
    top = acpwire("--help")
    for command in ("run", "trace", "show"):
        assert command in top.stdout
