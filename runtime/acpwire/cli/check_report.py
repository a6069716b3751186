"""`acpwire check`'s output: the table rule by rule (text), or one JSON document (json)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from .check_verdicts import Status, Verdict

__all__ = ["render_json", "render_text", "summary"]

EVIDENCE_WIDTH = 240
"""Characters of a wire line shown in the text table (json has the whole line)."""
MARKS = {Status.PASS: "pass", Status.FAIL: "FAIL", Status.NOT_APPLICABLE: "n/a"}


def summary(verdicts: Sequence[Verdict]) -> dict[str, int]:
    counts = Counter(v.status for v in verdicts)
    return {status.value: counts.get(status, 0) for status in Status}


def _clip(text: str) -> str:
    return text if len(text) <= EVIDENCE_WIDTH else text[: EVIDENCE_WIDTH - 3] + "..."


def render_text(
    command: Sequence[str],
    protocol: int | None,
    agent: str | None,
    verdicts: Sequence[Verdict],
    peer: str = "agent",
) -> str:
    """The table, then each failure with its sources and wire lines (`peer`: what was checked,
    "agent" or "client")."""
    spoken = f"protocol v{protocol}" if protocol else "no protocol agreed"
    named = agent or f"{'an' if peer == 'agent' else 'a'} {peer} without info"
    out = [
        f"acpwire check{' --client' if peer == 'client' else ''}: {' '.join(command)} ({named}, {spoken})",
        "",
    ]
    width = max(len(v.rule.id) for v in verdicts)
    family = None
    for verdict in verdicts:
        if verdict.rule.family is not family:
            family = verdict.rule.family
            out.append(f"{family.value}:")
        out.append(f"  {MARKS[verdict.status]:<4}  {verdict.rule.id:<{width}}  {verdict.reason}")
    failures = [v for v in verdicts if v.status is Status.FAIL]
    for verdict in failures:
        rule = verdict.rule
        out += ["", f"FAIL {rule.id}: {rule.title} ({rule.level})", f"  found: {verdict.reason}"]
        out += [f'  {source.where}: "{source.quote}"' for source in rule.sources]
        out += [f"  {_clip(line.render())}" for line in verdict.evidence]
    counts = summary(verdicts)
    out += [
        "",
        f"{counts['pass']} passed, {counts['fail']} failed, {counts['n/a']} not applicable"
        " (`--format json` has every rule's sources and evidence)",
    ]
    return "\n".join(out) + "\n"


def render_json(
    command: Sequence[str],
    protocol: int | None,
    agent: str | None,
    verdicts: Sequence[Verdict],
    exit_code: int,
    peer: str = "agent",
) -> str:
    """One JSON document: the peer checked (`peer`: "agent" or "client", the key its name is
    under), each rule's verdict with its sources and evidence (`toAgent` / `toClient`: the
    line was sent by the checker)."""
    sent = "toAgent" if peer == "agent" else "toClient"
    document: dict[str, Any] = {
        "command": list(command),
        "protocolVersion": protocol,
        peer: agent,
        "results": [
            {
                "rule": v.rule.id,
                "family": v.rule.family.value,
                "title": v.rule.title,
                "level": v.rule.level,
                "status": v.status.value,
                "reason": v.reason,
                "sources": [{"where": s.where, "quote": s.quote} for s in v.rule.sources],
                "evidence": [
                    {"process": line.process, sent: line.to_agent, "line": line.text}
                    for line in v.evidence
                ],
            }
            for v in verdicts
        ],
        "summary": summary(verdicts),
        "exitCode": exit_code,
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
