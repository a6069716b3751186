"""`acpwire show FILE --html PAGE`: the story as one self-contained HTML page (inline style, no
script, no network resource), with the standard library only."""

from __future__ import annotations

import html
import json

from .show_model import Entry, Story, Turn, exit_text, seconds, timeline

__all__ = ["render_html"]

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; padding: 0 1.5em; max-width: 1200px; color: #1d1f21; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; margin-top: 1.6em; } h3 { font-size: 1.05em; }
code, pre, td.mono { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; }
.facts span { margin-right: 1.2em; }
.ok { color: #1a7f37; } .bad { color: #cf222e; font-weight: 600; } .warn { color: #9a6700; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 2px 8px; vertical-align: top; border-bottom: 1px solid #eee; }
td.num { text-align: right; color: #57606a; white-space: nowrap; }
tr.finding td { background: #ffebe9; } tr.should td { background: #fff8c5; }
tr.client td.side { color: #0550ae; } tr.agent td.side { color: #8250df; }
details pre { white-space: pre-wrap; word-break: break-all; background: #f6f8fa; padding: 6px; margin: 4px 0; }
ul.turn { margin: 0.3em 0 1em 0; }
"""


def render_html(story: Story) -> str:
    """The whole page."""
    command = " ".join(story.header.get("command") or [])
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>acpwire trace: {_e(command)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>acpwire trace of <code>{_e(command)}</code></h1>",
        _facts(story),
        _findings(story),
        *(_session(story, session_id) for session_id in story.sessions),
        _timeline(story),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _facts(story: Story) -> str:
    header = story.header
    count = len(story.findings)
    facts = [
        f"started {_e(str(header.get('started', '?')))}",
        f"protocol v{story.protocol_version}" if story.protocol_version else "protocol unknown",
        f"agent {_e(story.agent)}" if story.agent else "agent unnamed",
        seconds(story.duration),
        f"{story.messages} messages",
        exit_text(story.exit) if story.exit is not None else "no exit recorded",
        f'<span class="{"bad" if count else "ok"}" id="finding-count">{count} finding{"s" * (count != 1)}</span>',
    ]
    return '<p class="facts">' + "".join(f"<span>{fact}</span>" for fact in facts) + "</p>"


def _findings(story: Story) -> str:
    findings = story.findings
    if not findings:
        return '<h2>Findings</h2><p class="ok">None: every rule acpwire show checks holds.</p>'
    items = [
        f'<li><a href="#line-{entry.number}">line {entry.number}</a> at {entry.t:.6f} s '
        f'({_e(entry.summary)}): <span class="{_level(finding.level)}">{finding.level} '
        f"{_e(finding.rule)}</span>: {_e(finding.message)}</li>"
        for entry, finding in findings
    ]
    return f'<h2>Findings ({len(findings)})</h2><ul id="findings">{"".join(items)}</ul>'


def _session(story: Story, session_id: str) -> str:
    session = story.sessions[session_id]
    turns = "".join(_turn(turn) for turn in session.turns) or "<p>No turn.</p>"
    return (
        f"<h2>Session <code>{_e(session_id)}</code></h2>"
        f"<p>{_e(session.how)}, at {session.opened:.3f} s</p>{turns}"
    )


def _turn(turn: Turn) -> str:
    items = [
        f"duration {seconds(turn.duration)}, first chunk after {seconds(turn.to_first_chunk)}"
        + (
            f", longest gap {seconds(turn.longest_gap[0])} at {turn.longest_gap[1]:.3f} s"
            if turn.longest_gap
            else ""
        )
    ]
    if turn.states:
        items.append(
            "states: "
            + " → ".join(
                f"{_e(state)}{f' ({_e(reason)})' if reason else ''} <small>{t:.3f}</small>"
                for t, state, reason in turn.states
            )
        )
    for call in turn.tool_calls.values():
        statuses = " → ".join(_e(status) for _, status in call.statuses)
        kind = f" ({_e(call.kind)})" if call.kind else ""
        items.append(f"tool call <b>{_e(call.title or call.tool_call_id)}</b>{kind}: {statuses}")
    for permission in turn.permissions:
        waited = None if permission.answered is None else permission.answered - permission.t
        items.append(
            f'permission <a href="#line-{permission.entry}">{_e(permission.title)}</a> '
            f"[{_e(', '.join(permission.options))}] → <b>{_e(permission.answer or 'never answered')}</b>"
            f" after {seconds(waited)}"
        )
    body = "".join(f"<li>{item}</li>" for item in items)
    return (
        f'<h3><a href="#line-{turn.entry}">Turn {turn.number}</a> <q>{_e(turn.prompt)}</q>: '
        f'<span class="stop">{_e(turn.outcome)}</span></h3><ul class="turn">{body}</ul>'
    )


def _timeline(story: Story) -> str:
    rows = []
    for row in timeline(story):
        entry = row.first
        css = [entry.side or "end"]
        levels = {finding.level for finding in entry.findings}
        if levels - {"SHOULD"}:
            css.append("finding")
        elif levels:
            css.append("should")
        delta = seconds(row.delta) if row.delta is not None else ""
        side = {"client": "client → agent", "agent": "agent → client"}.get(entry.side or "", "")
        rows.append(
            f'<tr class="{" ".join(css)}" id="line-{entry.number}"><td class="num">{entry.number}</td>'
            f'<td class="num">{entry.t:.6f}</td><td class="num">{delta}</td>'
            f'<td class="side">{side}</td><td>{_message(row.entries)}</td></tr>'
        )
    return (
        "<h2>Timeline</h2><table><thead><tr><th>line</th><th>t (s)</th><th>+Δ</th><th>side</th>"
        f'<th>message</th></tr></thead><tbody id="timeline">{"".join(rows)}</tbody></table>'
    )


def _message(entries: list[Entry]) -> str:
    entry = entries[0]
    summary = _e(entry.summary) if len(entries) == 1 else _e(f"{len(entries)} × {entry.update}")
    findings = "".join(
        f'<div class="{_level(f.level)}">✗ {f.level} {_e(f.rule)}: {_e(f.message)}</div>'
        for f in entry.findings
    )
    raws = [e.raw for e in entries if e.raw is not None]
    if not raws:
        return summary + findings
    shown = "\n".join(_pretty(raw) for raw in raws[:50])
    more = f"\n… {len(raws) - 50} more" if len(raws) > 50 else ""
    return f"<details><summary>{summary}</summary><pre>{_e(shown + more)}</pre></details>{findings}"


def _pretty(raw: bytes) -> str:
    try:
        return json.dumps(json.loads(raw), indent=2, ensure_ascii=False)
    except ValueError:
        return raw.decode(errors="replace")


def _level(level: str) -> str:
    return "warn" if level == "SHOULD" else "bad"


def _e(text: str) -> str:
    return html.escape(text, quote=True)
