"""What `acpwire check` concludes of each rule: pass, fail or not applicable, with the reason
and the wire lines that show it."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .check_peer import Incoming, WireLine
from .check_rules import RULES, Rule

__all__ = ["CapabilityProbes", "Status", "Verdict", "Verdicts"]


class Status(enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    NOT_APPLICABLE = "n/a"


_RANK = {Status.NOT_APPLICABLE: 0, Status.PASS: 1, Status.FAIL: 2}


@dataclass(frozen=True)
class Verdict:
    rule: Rule
    status: Status
    reason: str
    evidence: tuple[WireLine, ...] = ()


Evidence = Iterable[WireLine | Incoming | None]


def _lines(evidence: Evidence) -> tuple[WireLine, ...]:
    """The evidence's lines, once each, in wire order."""
    lines = (item.line if isinstance(item, Incoming) else item for item in evidence)
    return tuple(
        sorted(
            {line.seq: line for line in lines if line is not None}.values(),
            key=lambda line: line.seq,
        )
    )


class Verdicts:
    """The verdicts so far. A rule checked more than once keeps its strongest verdict: a
    failure over a pass over not applicable (the first of equals). `rules`: the table judged
    (the agent's rules, or the client's)."""

    def __init__(self, rules: Sequence[Rule] = RULES) -> None:
        self.rules = tuple(rules)
        self._rule = {r.id: r for r in self.rules}
        self._by_id: dict[str, Verdict] = {}
        self.peer = "agent" if self.rules == RULES else "client"

    def _give(self, rule_id: str, status: Status, reason: str, evidence: Evidence) -> None:
        verdict = Verdict(self._rule[rule_id], status, reason, _lines(evidence))
        old = self._by_id.get(rule_id)
        if old is None or _RANK[status] > _RANK[old.status]:
            self._by_id[rule_id] = verdict

    def passed(self, rule_id: str, reason: str, evidence: Evidence = ()) -> None:
        self._give(rule_id, Status.PASS, reason, evidence)

    def failed(self, rule_id: str, reason: str, evidence: Evidence = ()) -> None:
        self._give(rule_id, Status.FAIL, reason, evidence)

    def not_applicable(self, rule_id: str, reason: str, evidence: Evidence = ()) -> None:
        self._give(rule_id, Status.NOT_APPLICABLE, reason, evidence)

    def judge(self, rule_id: str, ok: bool, reason: str, evidence: Evidence = ()) -> None:
        """Pass or fail `rule_id` by `ok`, for the same reason and evidence."""
        self._give(rule_id, Status.PASS if ok else Status.FAIL, reason, evidence)

    def unjudged(self, rule_ids: Iterable[str], reason: str) -> None:
        """Rules not reached: not applicable for `reason` (unless judged already)."""
        for rule_id in rule_ids:
            self.not_applicable(rule_id, reason)

    def table(self, protocol: int | None) -> list[Verdict]:
        """Every rule in the table's order; rules of another protocol version (or never
        reached) not applicable."""
        verdicts = []
        for r in self.rules:
            verdict = self._by_id.get(r.id)
            if protocol is not None and protocol not in r.protocols:
                verdict = Verdict(r, Status.NOT_APPLICABLE, f"a protocol v{protocol} {self.peer}")
            elif verdict is None:
                verdict = Verdict(r, Status.NOT_APPLICABLE, "not reached")
            verdicts.append(verdict)
        return verdicts


class CapabilityProbes:
    """Capability-bound methods probed one by one, then judged together: one advertised but
    not served breaks `caps.advertised-served`, one served but not advertised
    `caps.served-advertised` (agents and clients alike). `timeout`: the seconds each probe
    waited for its answer (`--timeout`), named in the verdict of one never answered."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.probed: list[str] = []
        self.wrong: dict[str, list[str]] = {
            "caps.advertised-served": [],
            "caps.served-advertised": [],
        }
        self.evidence: dict[str, list[WireLine | Incoming | None]] = {k: [] for k in self.wrong}

    def record(
        self, method: str, advertised: bool, answer: Incoming | None, said: str, sent: WireLine
    ) -> bool | None:
        """One probe: `answer` (None: none came) described as `said`; whether it is served
        (anything but -32601), None without an answer."""
        if answer is None:
            if advertised:
                self.wrong["caps.advertised-served"].append(
                    f"{method} advertised, not answered within {self.timeout:g} s (--timeout)"
                )
                self.evidence["caps.advertised-served"].append(sent)
            return None
        served = answer.error_code != -32601
        self.probed.append(method)
        if advertised != served:
            rule_id = "caps.advertised-served" if advertised else "caps.served-advertised"
            how = "advertised but not served" if advertised else "served but not advertised"
            self.wrong[rule_id].append(f"{method} {how} ({said})")
            self.evidence[rule_id] += [sent, answer]
        return served

    def judge(self, verdicts: Verdicts) -> None:
        for rule_id, problems in self.wrong.items():
            verdicts.judge(
                rule_id,
                not problems,
                "; ".join(problems) or f"probed {', '.join(self.probed)}: served as advertised",
                self.evidence[rule_id],
            )
