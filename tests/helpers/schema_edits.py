"""Schema releases and snapshots derived from schema/ for the tests: edit the vendored files the
way a next release (or the protocol's main branch) could, write them out, generate from them and
probe the result in a fresh interpreter that sees only that output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codegen.lock import SCHEMA_FILES, NpmRelease, write_lock
from helpers.paths import ROOT

PACKAGE = "@agentclientprotocol/sdk"

Schema = dict[str, Any]
Edit = Callable[[str, Schema], None]


def write_edited(out: Path, edit: Edit) -> Path:
    """schema/'s files with `edit(file name, parsed schema)` applied, written under `out`."""
    for name in SCHEMA_FILES:
        schema = json.loads((ROOT / "schema" / name).read_text())
        edit(name, schema)
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(json.dumps(schema, indent=2))
    return out


def synthetic_release(tmp_path: Path, release: str, edit: Edit) -> Path:
    """schema/ edited by `edit`, locked as npm release `release`."""
    out = write_edited(tmp_path / f"schema-{release}", edit)
    write_lock(out, NpmRelease(PACKAGE, release))
    return out


def rename_def(schema: Schema, old: str, new: str) -> Schema:
    """`old` renamed to `new`, every $ref to it included."""
    text = json.dumps(schema).replace(f'"#/$defs/{old}"', f'"#/$defs/{new}"')
    renamed: Schema = json.loads(text)
    renamed["$defs"][new] = renamed["$defs"].pop(old)
    return renamed


def refers_to(node: Any, name: str) -> bool:
    return f'"#/$defs/{name}"' in json.dumps(node)


def drop_def(schema: Schema, name: str) -> None:
    """Remove $defs/name and every union member that refers to it."""
    del schema["$defs"][name]
    for body in schema["$defs"].values():
        for key in ("anyOf", "oneOf"):
            if key in body and any(refers_to(m, name) for m in body[key]):
                body[key] = [m for m in body[key] if not refers_to(m, name)]
    assert not refers_to(schema, name)


PROGRESS_VARIANT = {
    "description": "Progress of the current turn.",
    "type": "object",
    "properties": {"sessionUpdate": {"type": "string", "const": "turn_progress"}},
    "required": ["sessionUpdate"],
    "allOf": [{"$ref": "#/$defs/TurnProgress"}],
}
TURN_PROGRESS = {
    "description": "How far the agent is.",
    "type": "object",
    "properties": {"percent": {"type": "integer", "format": "uint8", "minimum": 0}},
    "required": ["percent"],
}


def add_progress_variant(name: str, schema: Schema) -> None:
    """A `turn_progress` SessionUpdate variant in both v2 files."""
    if name.startswith("v2/"):
        members = schema["$defs"]["SessionUpdate"]["anyOf"]
        members.insert(len(members) - 1, PROGRESS_VARIANT)  # before the catch-all "other"
        schema["$defs"]["TurnProgress"] = TURN_PROGRESS


def generate_and_probe(
    schema_dir: Path,
    tmp_path: Path,
    probe: str,
    *args: str,
    codegen_args: tuple[str, ...] = (),
    path: tuple[Path, ...] = (),
) -> Any:
    """Generate into tmp_path, then run `probe` in a fresh interpreter that sees only that
    output (not generated/), then the folders `path` (e.g. runtime/: acpwire on these bindings);
    the probe prints one JSON value."""
    out = tmp_path / "acp_schema"
    command = [sys.executable, "-m", "codegen", "--schema-dir", str(schema_dir), "--out", str(out)]
    gen = subprocess.run(
        [*command, *codegen_args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert gen.returncode == 0, f"codegen failed:\n{gen.stdout}\n{gen.stderr}"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONPATH"] = os.pathsep.join(map(str, (tmp_path, *path)))
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(probe), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, f"probe failed:\n{run.stdout}\n{run.stderr}"
    return json.loads(run.stdout)
