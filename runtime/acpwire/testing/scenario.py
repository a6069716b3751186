"""The fake agent's script as data: what it answers to `initialize`, which methods fail, and
what each prompt turn does, step by step (plain dicts and lists, or these Structs; JSON for
`python -m acpwire.testing`).

    {
        "turns": [
            {"steps": [
                {"type": "say", "text": "I will read the file."},
                {"type": "tool_call", "id": "read", "title": "Read a.txt", "kind": "read"},
                {"type": "ask", "tool_call": "read", "title": "Read a.txt?",
                 "then": {"reject": [{"type": "stop", "reason": "refusal"}]}},
                {"type": "tool_update", "id": "read", "status": "completed", "output": "hi"}
            ]}
        ],
        "errors": {"session/list": {"code": -32603, "message": "the index is gone"}}
    }

`AgentScenario.parse(data)` checks it all before anything runs and raises `ScenarioError`
naming the bad step (`turns[0].steps[2] (ask): ...`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeAlias, get_args

import msgspec

from acp_schema import v1, v2
from acpwire import StopReason

__all__ = [
    "AgentScenario",
    "Ask",
    "Diff",
    "ErrorAnswer",
    "Option",
    "Say",
    "ScenarioError",
    "Sleep",
    "Step",
    "Stop",
    "ToolCall",
    "ToolUpdate",
    "Turn",
    "WaitForCancel",
]


class ScenarioError(ValueError):
    """A scenario that cannot run as written (the message names the step and the fix), or a
    turn that asked for more than the scenario scripted."""


class _Step(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, tag_field="type"):
    """What every step shares: its `type` tag."""


class Say(_Step, tag="say"):
    """`{"type": "say", "text": ...}`: a chunk of the agent's reply (`agent_message_chunk`)."""

    text: str
    """The chunk's text."""


class ToolCall(_Step, tag="tool_call"):
    """`{"type": "tool_call", "id": ..., "title": ...}`: announce a tool call (status
    `pending`); later steps name it by `id`."""

    id: str
    """The scenario's name for it (the wire's `toolCallId` is the runtime's own)."""
    title: str
    """Its title."""
    kind: v1.ToolKind = "other"
    """Its kind (`read`, `edit`, `execute`, ...: what permission policies look at)."""
    locations: list[str] = msgspec.field(default_factory=list)
    """Absolute paths of the files it touches."""


class ToolUpdate(_Step, tag="tool_update"):
    """`{"type": "tool_update", "id": ..., "status": ...}`: change a tool call announced
    before: its status and title when given, and `output` added to its content."""

    id: str
    """The `id` of a `tool_call` step before this one."""
    status: v1.ToolCallStatus | None = None
    """The new status (`in_progress`, `completed`, `failed`), None: unchanged."""
    title: str | None = None
    """A new title, None: unchanged."""
    output: str | None = None
    """Text added to the tool call's content, None: nothing."""


class Diff(_Step, tag="diff"):
    """`{"type": "diff", "id": ..., "path": ..., "old": ..., "new": ...}`: add a file's diff
    to a tool call's content."""

    id: str
    """The `id` of a `tool_call` step before this one."""
    path: str
    """The file's absolute path."""
    old: str | None
    """Its text before (None: a new file)."""
    new: str
    """Its text after."""


class Option(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One option of an `ask` step."""

    id: str
    """The option's id (what the client selects)."""
    kind: v1.PermissionOptionKind
    """`allow_once`, `allow_always`, `reject_once` or `reject_always`."""
    name: str = ""
    """What the user is shown (default: the id)."""


ALLOW_OR_REJECT = [Option(id="allow", kind="allow_once"), Option(id="reject", kind="reject_once")]
CANCELLED = "cancelled"


class Ask(_Step, tag="ask"):
    """`{"type": "ask", "tool_call": ..., "title": ..., "then": {...}}`: ask permission for a
    tool call and wait for the answer (the session is `requires_action` meanwhile); then run
    the steps of `then` under the chosen option's id (`"cancelled"`: the client answered
    cancelled), and go on with the steps after this one unless those stopped the turn."""

    tool_call: str
    """The `id` of a `tool_call` step before this one."""
    title: str
    """The request's title (v2; v1 requests carry none)."""
    options: list[Option] = msgspec.field(default_factory=lambda: list(ALLOW_OR_REJECT))
    """The options offered (default: `allow` allow_once, `reject` reject_once)."""
    then: dict[str, list[Step]] = msgspec.field(default_factory=dict)
    """Steps by answer: an option id, or `"cancelled"`."""


class Sleep(_Step, tag="sleep"):
    """`{"type": "sleep", "seconds": ...}`: pause (a turn slow enough to be cancelled)."""

    seconds: float
    """How long."""


class WaitForCancel(_Step, tag="wait_for_cancel"):
    """`{"type": "wait_for_cancel"}`: wait until the client cancels the turn
    (`session/cancel`); the turn then ends `cancelled`."""


class Stop(_Step, tag="stop"):
    """`{"type": "stop", "reason": ...}`: end the turn now with this stop reason."""

    reason: str
    """ACP's (`end_turn`, `max_tokens`, `max_turn_requests`, `refusal`, `cancelled`) or a
    custom one beginning with `_` (v2 only: over v1 the prompt is then answered -32603)."""


Step: TypeAlias = Say | ToolCall | ToolUpdate | Diff | Ask | Sleep | WaitForCancel | Stop
"""One step of a turn, told apart by its `type`."""

STEP_TYPES = tuple(step.__struct_config__.tag for step in get_args(Step))


class Turn(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """What the agent does for one `session/prompt`: the n-th prompt it receives runs the
    scenario's n-th turn."""

    steps: list[Step] = msgspec.field(default_factory=list)
    """What the turn does, in order."""
    stop_reason: str = "end_turn"
    """How the turn ends once its steps ran (a `stop` step ends it earlier)."""
    expect_prompt: str | None = None
    """When given, a prompt whose text (its text blocks joined by newlines) differs is
    answered -32602 naming both."""


class ErrorAnswer(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A JSON-RPC error the agent answers a method with."""

    code: int
    """The error code (-32000 authentication required, -32002 not found, -32603, ...)."""
    message: str
    """The error message."""
    data: object = None
    """The error's `data`, when not None."""


class AgentScenario(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A fake agent's whole script. Build it from data with `AgentScenario.parse`."""

    turns: list[Turn] = msgspec.field(default_factory=list)
    """One per prompt, in the order the prompts arrive; a prompt beyond them is answered
    -32603 saying so."""
    protocols: list[Literal[1, 2]] = msgspec.field(default_factory=lambda: [2, 1])
    """The protocol versions the agent speaks (the client's `initialize` picks)."""
    name: str = "fake-agent"
    """Its name in the `initialize` answer."""
    version: str = "0"
    """Its version in the `initialize` answer."""
    errors: dict[str, ErrorAnswer] = msgspec.field(default_factory=dict)
    """Methods answered with an error instead (`"session/new"`, `"initialize"`, ...)."""
    capabilities: dict[str, Any] | None = None
    """The v2 `initialize` answer's `capabilities`, as JSON (`{"session": {}}`, `{}` for
    none); None: what the agent implements (`agent_capabilities`)."""
    v1_capabilities: dict[str, Any] | None = None
    """The v1 `initialize` answer's `agentCapabilities`, as JSON (`{"loadSession": true}`);
    None: what the agent implements."""

    @classmethod
    def parse(cls, data: AgentScenario | Mapping[str, Any] | str | Path) -> AgentScenario:
        """A checked scenario from a Struct, a dict (as JSON would give), or a JSON file's
        path; raises `ScenarioError` naming what is wrong and where."""
        if isinstance(data, Path):
            try:
                data = json.loads(data.read_text())
            except (OSError, ValueError) as exc:
                raise ScenarioError(f"scenario file {data}: {exc}") from None
        if isinstance(data, str):
            raise ScenarioError("give a scenario as a dict, an AgentScenario or a Path, not a str")
        if isinstance(data, AgentScenario):
            data = msgspec.to_builtins(data)
        try:
            scenario = msgspec.convert(data, cls)
        except msgspec.ValidationError as exc:
            raise ScenarioError(_explained(str(exc))) from None
        _check(scenario)
        return scenario


def _explained(error: str) -> str:
    """msgspec's message with the path made readable and the known step types listed."""
    text, _, path = error.partition(" - at `$")
    where = path.rstrip("`")
    hint = ""
    if where.endswith(".type") or "`type`" in text:
        hint = f" (a step's type is one of {', '.join(STEP_TYPES)})"
    return f"scenario{' ' + where.lstrip('.') if where else ''}: {text}{hint}"


KNOWN_STOP_REASONS = frozenset(get_args(StopReason))
AGENT_REQUESTS = {
    spec.name: spec.handler
    for surface in (v2.SURFACE, v1.SURFACE)
    for spec in surface.agent_methods.values()
    if spec.kind == "request"
}
"""The methods a client asks an agent, either version: their handler's name."""


def _check(scenario: AgentScenario) -> None:
    if not scenario.protocols:
        raise ScenarioError("scenario protocols: give at least one of 2, 1")
    for method in scenario.errors:
        if method not in AGENT_REQUESTS:
            raise ScenarioError(
                f"scenario errors: {method!r} is not a request a client sends an agent; "
                f"one of {sorted(AGENT_REQUESTS)}"
            )
    for field, capabilities in (
        ("capabilities", v2.AgentCapabilities),
        ("v1_capabilities", v1.AgentCapabilities),
    ):
        value = getattr(scenario, field)
        if value is not None:
            try:
                msgspec.convert(value, capabilities)
            except msgspec.ValidationError as exc:
                text, _, where = str(exc).partition(" - at `$")
                raise ScenarioError(f"scenario {field}{where.rstrip('`')}: {text}") from None
    for number, turn in enumerate(scenario.turns):
        where = f"turns[{number}]"
        _check_stop_reason(turn.stop_reason, f"{where}.stop_reason")
        _check_steps(turn.steps, f"{where}.steps", set())


def _check_steps(steps: list[Step], where: str, announced: set[str]) -> None:
    for number, step in enumerate(steps):
        at = f"{where}[{number}] ({step.__struct_config__.tag})"
        match step:
            case ToolCall():
                if step.id in announced:
                    raise ScenarioError(f"{at}: tool call {step.id!r} was announced before")
                announced.add(step.id)
            case ToolUpdate() | Diff():
                _check_announced(step.id, announced, at)
            case Ask():
                _check_announced(step.tool_call, announced, at)
                _check_ask(step, at)
                for answer, branch in step.then.items():
                    _check_steps(branch, f"{where}[{number}].then[{answer!r}]", set(announced))
            case Stop():
                _check_stop_reason(step.reason, at)
            case Sleep() if step.seconds < 0:
                raise ScenarioError(f"{at}: seconds must be 0 or more, not {step.seconds}")


def _check_announced(tool_call: str, announced: set[str], at: str) -> None:
    if tool_call not in announced:
        known = f"the ones before it: {sorted(announced)}" if announced else "none is before it"
        raise ScenarioError(
            f"{at}: no tool_call step with id {tool_call!r} ({known}); announce it first"
        )


def _check_ask(step: Ask, at: str) -> None:
    ids = [option.id for option in step.options]
    if not ids:
        raise ScenarioError(f"{at}: give at least one option (the schema: minItems 1)")
    if len(set(ids)) != len(ids):
        raise ScenarioError(f"{at}: option ids must be unique, got {ids}")
    for answer in step.then:
        if answer not in ids and answer != CANCELLED:
            raise ScenarioError(
                f"{at}: then[{answer!r}] is no answer the client can give: one of the option "
                f"ids {ids} or {CANCELLED!r}"
            )


def _check_stop_reason(reason: str, at: str) -> None:
    if reason not in KNOWN_STOP_REASONS and not reason.startswith("_"):
        raise ScenarioError(
            f"{at}: stop reason {reason!r} is not ACP's ({sorted(KNOWN_STOP_REASONS)}); a "
            "custom one begins with '_'"
        )
