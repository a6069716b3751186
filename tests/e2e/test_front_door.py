"""The front door: a user's agent and client, written from the README and annotated throughout
(tests/e2e/front_door_user.py), import acpwire only through its public modules, pass
`mypy --strict`, and run on both loops."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import acpwire
from helpers.processes import PYTHONPATH

pytestmark = pytest.mark.usefixtures("loop")

USER_PROGRAM = Path(__file__).with_name("front_door_user.py")
PUBLIC_MODULES = {
    "acpwire",
    "acpwire.agent",
    "acpwire.client",
    "acpwire.errors",
    "acpwire.streams",
    "acpwire.testing",
}


def test_the_user_program_imports_acpwire_only_through_its_public_modules() -> None:
    imported: set[str] = set()
    for node in ast.walk(ast.parse(USER_PROGRAM.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    ours = {module for module in imported if module.split(".")[0] == "acpwire"}
    assert ours <= PUBLIC_MODULES, ours - PUBLIC_MODULES
    assert {"acpwire", "acpwire.client", "acpwire.testing"} <= ours


def test_the_names_it_annotates_with_come_from_the_front_door() -> None:
    """What the README's users annotate (the typed views, the update stream, the session store,
    the policy types, the turn types, the tool-call handles) is in `acpwire.__all__`."""
    annotated = {
        *("UpdateStream", "Negotiated", "V1Negotiated", "Opened"),
        *("SessionStore", "StoredSession", "Policy", "Decision", "Verdict"),
        *("TurnEvents", "V1TurnEvents", "TurnEvent", "V1TurnEvent", "ConnectionOptions"),
        *("Turn", "V1Turn", "AgentTurn", "AnyWork", "ToolCallHandle", "TurnToolCall"),
        *("V1TurnToolCall", "PermissionChoice"),
    }
    assert annotated <= set(acpwire.__all__), annotated - set(acpwire.__all__)


def test_the_user_program_passes_mypy_strict(tmp_path: Path) -> None:
    """Checked as a standalone file, the way a user's code is (no `Any` from acpwire: mypy
    --strict reports untyped calls and `Any` returns)."""
    program = tmp_path / USER_PROGRAM.name
    program.write_text(USER_PROGRAM.read_text())
    mypy = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(program)]
    mypy.append(f"--cache-dir={tmp_path / 'mypy_cache'}")
    env = {**os.environ, "MYPYPATH": PYTHONPATH["PYTHONPATH"]}
    done = subprocess.run(mypy, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def user_program() -> ModuleType:
    """The program, imported as a user's module (not a test module)."""
    spec = importlib.util.spec_from_file_location("front_door_user", USER_PROGRAM)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_user_program_runs() -> None:
    assert await user_program().main() == [
        "v2 agent notes",
        "[end_turn] v2 read for notes",
        "by hand: refusal",  # outside a turn the policy sees no tool kind: asks, so rejects
        "[end_turn] v1 read for notes",
        "v2 agent edits",
        "v2 asked: ask",
        "[end_turn] edited",
        "by hand: end_turn",
    ]
