"""`acpwire show FILE` in the terminal, with rich (the `cli` extra: imported only here)."""

from __future__ import annotations

from typing import Any, TextIO

from .show_model import Story, Turn, exit_text, seconds, timeline

__all__ = ["INSTALL", "render_terminal"]

INSTALL = "pip install 'acpwire[cli]'"
SIDES = {"client": "client → agent", "agent": "agent → client", None: ""}
LEVEL_STYLE = {"MUST": "bold red", "SHOULD": "yellow", "error": "bold red"}


def render_terminal(story: Story, out: TextIO, *, with_timeline: bool = True) -> None:
    """Print the story: the header, each session's turns, the timeline with the findings at
    their place, and the findings' list."""
    try:
        from rich.console import Console
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"acpwire show's terminal view needs rich (the `cli` extra): {INSTALL}; "
            "or write the page with --html FILE, which needs nothing more",
            name=error.name,
        ) from error

    class Terminal(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError  # `acpwire` exits 141, as for its other commands

    console = Terminal(file=out, highlight=False, soft_wrap=True)
    _header(console, story)
    for session in story.sessions.values():
        console.print(
            f"\n[bold]Session {session.session_id}[/] ({session.how}, at {session.opened:.3f} s)"
        )
        for turn in session.turns:
            _turn(console, turn)
    if with_timeline:
        _timeline(console, story)
    _findings(console, story)


def _header(console: Any, story: Story) -> None:
    header = story.header
    command = " ".join(header.get("command") or [])
    console.print(f"[bold]acpwire trace[/] of [cyan]{_escape(command)}[/]")
    facts = [
        f"started {header.get('started', '?')}",
        f"protocol v{story.protocol_version}" if story.protocol_version else "protocol unknown",
        f"agent {story.agent}" if story.agent else "agent unnamed",
        f"{seconds(story.duration)}",
        f"{story.messages} messages",
    ]
    if story.exit is not None:
        facts.append(exit_text(story.exit))
    count = len(story.findings)
    facts.append(f"[{'bold red' if count else 'green'}]{count} finding{'s' * (count != 1)}[/]")
    console.print(" · ".join(facts))


def _turn(console: Any, turn: Turn) -> None:
    console.print(
        f"  [bold]Turn {turn.number}[/] {_escape(repr(turn.prompt))}: [bold]{_escape(turn.outcome)}[/]"
        f" · duration {seconds(turn.duration)} · first chunk {seconds(turn.to_first_chunk)}"
        + (
            f" · longest gap {seconds(turn.longest_gap[0])} at {turn.longest_gap[1]:.3f} s"
            if turn.longest_gap
            else ""
        )
    )
    if turn.states:
        states = " → ".join(
            f"{state}{f' ({reason})' if reason else ''} {t:.3f}" for t, state, reason in turn.states
        )
        console.print(f"    states: {_escape(states)}")
    for call in turn.tool_calls.values():
        statuses = " → ".join(status for _, status in call.statuses)
        kind = f" ({call.kind})" if call.kind else ""
        console.print(f"    tool call {_escape(call.title or call.tool_call_id)}{kind}: {statuses}")
    for permission in turn.permissions:
        waited = None if permission.answered is None else permission.answered - permission.t
        answer = permission.answer or "never answered"
        console.print(
            f"    permission {_escape(repr(permission.title))} [{_escape(', '.join(permission.options))}]"
            f" → {_escape(answer)} after {seconds(waited)}"
        )


def _timeline(console: Any, story: Story) -> None:
    from rich.table import Table

    table = Table(title="Timeline", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("line", justify="right", style="dim")
    table.add_column("t (s)", justify="right")
    table.add_column("+Δ", justify="right", style="dim")
    table.add_column("side")
    table.add_column("message", overflow="fold")
    for row in timeline(story):
        entry = row.first
        table.add_row(
            str(entry.number),
            f"{entry.t:.6f}",
            seconds(row.delta) if row.delta is not None else "",
            SIDES.get(entry.side, ""),
            _escape(row.summary),
        )
        for finding in entry.findings:
            style = LEVEL_STYLE[finding.level]
            table.add_row(
                "",
                "",
                "",
                "",
                f"[{style}]✗ {finding.level} {finding.rule}: {_escape(finding.message)}[/]",
            )
    console.print()
    console.print(table)


def _findings(console: Any, story: Story) -> None:
    findings = story.findings
    console.print(f"\n[bold]Findings[/] ({len(findings)})")
    if not findings:
        console.print("  [green]none: every rule acpwire show checks holds[/]")
    for entry, finding in findings:
        style = LEVEL_STYLE[finding.level]
        console.print(
            f"  line {entry.number} at {entry.t:.6f} s ({_escape(entry.summary)}): "
            f"[{style}]{finding.level} {finding.rule}[/]: {_escape(finding.message)}"
        )


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
