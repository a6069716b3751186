"""The runtime's layers, read from its imports: arrows point down only.

    acpwire (the front door) -> {acpwire.agent, acpwire.client} -> acpwire._wire
        -> acpwire.streams -> {acpwire.errors, the loop helpers}

`agent` and `client` never import each other; the session-state fold and the permission
policies do no I/O (they import acp_schema and each other, nothing of the runtime).
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import acpwire

PACKAGE = Path(acpwire.__file__).parent

ALLOWED: dict[str, set[str]] = {
    "_version": set(),
    "_loop": set(),
    "_groups": {"_loop"},
    "errors": set(),
    "streams": {"errors", "_loop", "_groups", "_lazy"},
    "_wire": {"streams", "errors", "_loop", "_groups"},
    "agent": {"_wire", "streams", "errors", "_loop", "_groups", "_version", "_lazy"},
    "client": {"_wire", "streams", "errors", "_loop", "_groups", "_version", "_lazy"},
    "front door": {
        "agent",
        "client",
        "streams",
        "errors",
        "_version",
        "_moved",
        "_lazy",
        "verbatim",
    },
    "_moved": set(),
    "_lazy": {"_moved"},
    "verbatim": set(),
    "cli": {"front door", "agent", "client", "errors", "streams"},
    "__main__": {"cli"},
    "otel": {"_wire", "errors", "_version"},
}
"""What each part of the runtime may import of the others (itself aside). The `acpwire`
command (`cli`, run by `__main__`) is a layer above the front door, on the public API only;
`otel` (OpenTelemetry, an optional extra) instruments connections through `_wire`'s hooks."""

PUBLIC = {"acpwire", "acpwire.agent", "acpwire.client", "acpwire.errors", "acpwire.streams"}
"""The modules users import: all that `cli` may import of the runtime (besides itself)."""

ABOVE = ("testing", "examples", "fixtures")
"""Built on the public API, like users' code: not part of the layering."""

ABOVE_ALSO = {
    "testing": {
        "acpwire._groups",
        "acpwire.cli.replay_engine",
        "acpwire.cli.replay_script",
        "acpwire.cli.trace_format",
    }
}
"""The modules a part above may use besides the public ones: the fakes leave their context
managers with one exception, by the endpoints' own rule; `FakeAgent.from_trace` plays a trace
with `acpwire replay`'s code (imported when called)."""

PURE = {"client/state.py", "client/permissions.py"}
"""No I/O: the fold and the policies import nothing of the runtime but each other."""


def part(module: str) -> str:
    """`acpwire.client.state` -> `client`; `acpwire` -> `front door`."""
    parts = module.split(".")
    return "front door" if len(parts) == 1 else parts[1]


def module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(path: Path) -> set[str]:
    """The acpwire modules a file imports (relative imports resolved)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("acpwire")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
                found.add(target)
                if node.module is None:  # `from . import x`: x may be a module
                    found |= {f"{base}.{alias.name}" for alias in node.names}
            elif node.module and node.module.startswith("acpwire"):
                found.add(node.module)
    return {module for module in found if _is_module(module)}


def _is_module(name: str) -> bool:
    relative = Path(*name.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").exists() or (PACKAGE / relative).is_dir()


def runtime_files() -> list[Path]:
    return sorted(
        path
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts[0].removesuffix(".py") not in ABOVE
    )


@pytest.mark.parametrize("path", runtime_files(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_imports_point_down(path: Path) -> None:
    own = part(module_name(path))
    wrong = sorted(
        module
        for module in imported(path)
        if part(module) != own and part(module) not in ALLOWED[own]
    )
    assert not wrong, f"{own} may import {sorted(ALLOWED[own])}, not {wrong}"


@pytest.mark.parametrize(
    "path", sorted((PACKAGE / "cli").rglob("*.py")), ids=lambda path: path.name
)
def test_the_command_uses_the_public_api_only(path: Path) -> None:
    wrong = sorted(
        module for module in imported(path) if module not in PUBLIC and part(module) != "cli"
    )
    assert not wrong, f"acpwire.cli may import {sorted(PUBLIC)}, not {wrong}"


def test_import_acpwire_imports_nothing_of_the_command() -> None:
    code = "import sys, acpwire; print(sorted(m for m in sys.modules if m.startswith(('acpwire.cli.', 'rich')) or m == 'acpwire.cli'))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout == "[]\n"


@pytest.mark.parametrize(
    "path",
    sorted((PACKAGE / "testing").rglob("*.py")),
    ids=lambda path: str(path.relative_to(PACKAGE)),
)
def test_the_testing_package_uses_the_public_api(path: Path) -> None:
    """acpwire.testing is written as a user would write it (its own modules aside)."""
    wrong = sorted(
        module
        for module in imported(path)
        if part(module) != "testing" and module not in PUBLIC | ABOVE_ALSO["testing"]
    )
    assert not wrong, f"acpwire.testing may import {sorted(PUBLIC)}, not {wrong}"


@pytest.mark.parametrize("relative", sorted(PURE))
def test_the_fold_and_the_policies_do_no_io(relative: str) -> None:
    path = PACKAGE / relative
    others = {module_name(PACKAGE / pure) for pure in PURE}
    assert imported(path) <= others
    assert not {
        alias.name.split(".")[0]
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (node.names if isinstance(node, ast.Import) else [])
    } & {"trio", "anyio", "asyncio", "socket", "subprocess"}


def test_every_runtime_module_has_a_place() -> None:
    """A new top-level module or folder must be given its layer here."""
    top = {path.relative_to(PACKAGE).parts[0].removesuffix(".py") for path in runtime_files()}
    assert top - {"__init__"} <= set(ALLOWED) | {"_wire", "agent", "client", "streams"}


@pytest.mark.parametrize(
    ("old", "name", "new"),
    [
        ("acpwire.lifecycle", "PromptTurns", "acpwire.agent.PromptTurns"),
        ("acpwire.lifecycle", "KNOWN_STOP_REASONS", "acpwire.agent.turns.KNOWN_STOP_REASONS"),
        ("acpwire.capabilities", "agent_capabilities", "acpwire.agent.agent_capabilities"),
        ("acpwire.diffs", "v2_diff", "acpwire.agent.v2_diff"),
        ("acpwire.sessions", "turn_agents", "acpwire.agent.turn_agents"),
        ("acpwire.session", "SessionState", "acpwire.client.SessionState"),
        ("acpwire.permissions", "approve_reads", "acpwire.client.approve_reads"),
        ("acpwire.turns", "prompt", "acpwire.client.prompt"),
        ("acpwire.turns", "Turn", "acpwire.client.TurnEvents"),
        ("acpwire.resume", "open_session", "acpwire.client.open_session"),
        ("acpwire.transport", "spawn_agent", "acpwire.streams.spawn_agent"),
        ("acpwire.transport", "AgentNotFound", "acpwire.errors.AgentNotFound"),
    ],
)
def test_moved_modules_still_import_and_warn(old: str, name: str, new: str) -> None:
    module_path, _, attribute = new.rpartition(".")
    expected = getattr(importlib.import_module(module_path), attribute)
    with pytest.warns(DeprecationWarning, match=f"{old} moved in acpwire 0.2"):
        module = importlib.reload(importlib.import_module(old))
    assert getattr(module, name) is expected
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        module.nothing_here  # noqa: B018


def test_the_old_names_warn_where_they_are_imported() -> None:
    """The warning points at the user's import line, not into importlib."""
    code = "import acpwire\nfrom acpwire.session import SessionState\n"
    result = subprocess.run(
        [sys.executable, "-W", "always::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stderr.startswith("<string>:2: DeprecationWarning: acpwire.session moved")
