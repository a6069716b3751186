"""Generation from releases that are not schema/: synthetic releases derived from it.

Each test copies schema/ (the current release), edits it the way a next (or older) release of
@agentclientprotocol/sdk could, locks it under another release number and runs the generator:
it either produces bindings that decode the edited shapes, or stops with the JSON pointer of the
node it cannot map. Never silently wrong: a three-state patch type that disappears (renamed or
removed) stops generation for every release at or after the one that introduced it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen.__main__ import main as codegen_main
from codegen.lock import SCHEMA_FILES, write_lock
from codegen.patch_fields import FIRST_RELEASE, release_key
from codegen.release import BINDINGS_REVISION
from helpers.paths import ROOT

PACKAGE = "@agentclientprotocol/sdk"
NEXT = "9.0.0"

Schema = dict[str, Any]
Edit = Callable[[str, Schema], None]


def synthetic_release(tmp_path: Path, release: str, edit: Edit) -> Path:
    """schema/ with `edit(file name, parsed schema)` applied to each file, locked as `release`."""
    out = tmp_path / f"schema-{release}"
    for name in SCHEMA_FILES:
        schema = json.loads((ROOT / "schema" / name).read_text())
        edit(name, schema)
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(json.dumps(schema, indent=2))
    write_lock(out, PACKAGE, release)
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


def failure(schema_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run the generator in-process; it must fail, write nothing, and explain on stderr."""
    out = tmp_path / "out" / "acp_schema"
    assert codegen_main(["--schema-dir", str(schema_dir), "--out", str(out)]) == 1
    assert not out.exists()
    return capsys.readouterr().err


def generate_and_probe(schema_dir: Path, tmp_path: Path, probe: str, *args: str) -> Any:
    """Generate into tmp_path, then run `probe` in a fresh interpreter that sees only that
    output (not generated/); the probe prints one JSON value."""
    out = tmp_path / "acp_schema"
    gen = subprocess.run(
        [sys.executable, "-m", "codegen", "--schema-dir", str(schema_dir), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert gen.returncode == 0, f"codegen failed:\n{gen.stdout}\n{gen.stderr}"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONPATH"] = str(tmp_path)
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


# --- a type renamed -----------------------------------------------------------


def test_renamed_patch_type_stops_generation_at_its_pointer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def edit(name: str, schema: Schema) -> None:
        schema.update(rename_def(schema, "CompactionUpdate", "ContextCompactionUpdate"))

    err = failure(synthetic_release(tmp_path, NEXT, edit), tmp_path, capsys)

    assert "#/$defs/CompactionUpdate: named in patch_fields.py but not in the schema" in err


def test_renamed_payload_type_keeps_its_pinned_variant_name(tmp_path: Path) -> None:
    """The `text` content block is the class users match on: a release that renames its payload
    type in the schema does not rename it (codegen/names.py pins it)."""

    def edit(name: str, schema: Schema) -> None:
        schema.update(rename_def(schema, "TextContent", "PlainText"))

    result = generate_and_probe(
        synthetic_release(tmp_path, NEXT, edit),
        tmp_path,
        """
        import json, sys
        import acp_schema
        from acp_schema import v1, v2
        v1_msg = v1.decode_message(sys.argv[1].encode())
        print(json.dumps({
            "version": acp_schema.__version__,
            "content": type(v1_msg.params.update.content).__name__,
            "text": v1_msg.params.update.content.text,
            "pinned_name_kept": hasattr(v1, "TextContent") and hasattr(v2, "TextContent"),
            "schema_name_exported": hasattr(v1, "PlainText") or hasattr(v2, "PlainText"),
            "same_json": json.loads(v1.encode_message(v1_msg)) == json.loads(sys.argv[1]),
        }))
        """,
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}',
    )

    assert result == {
        "version": f"{NEXT}.{BINDINGS_REVISION}",
        "content": "TextContent",
        "text": "hi",
        "pinned_name_kept": True,
        "schema_name_exported": False,
        "same_json": True,
    }


# --- a variant added ----------------------------------------------------------

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
    if name.startswith("v2/"):
        members = schema["$defs"]["SessionUpdate"]["anyOf"]
        members.insert(len(members) - 1, PROGRESS_VARIANT)  # before the catch-all "other"
        schema["$defs"]["TurnProgress"] = TURN_PROGRESS


def test_added_session_update_variant_decodes_to_its_own_class(tmp_path: Path) -> None:
    line = (
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s",'
        '"update":{"sessionUpdate":"turn_progress","percent":40}}}'
    )
    result = generate_and_probe(
        synthetic_release(tmp_path, NEXT, add_progress_variant),
        tmp_path,
        """
        import json, sys
        from acp_schema import OpenVariant, v2
        msg = v2.decode_message(sys.argv[1].encode())
        update = msg.params.update
        print(json.dumps({
            "update": type(update).__name__,
            "open": isinstance(update, OpenVariant),
            "percent": update.percent,
            "same_json": json.loads(v2.encode_message(msg)) == json.loads(sys.argv[1]),
        }))
        """,
        line,
    )

    # not in codegen/names.py: named by its rule, <Tag><Union>, until it is pinned there
    expected = {"open": False, "percent": 40, "same_json": True}
    assert result == {"update": "TurnProgressSessionUpdate", **expected}


def test_a_variant_not_in_the_naming_table_is_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema_dir = synthetic_release(tmp_path, NEXT, add_progress_variant)
    out = tmp_path / "out" / "acp_schema"
    assert codegen_main(["--schema-dir", str(schema_dir), "--out", str(out)]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert warnings == [
        "codegen: warning: v2 SessionUpdate variant 'turn_progress' is not in codegen/names.py;"
        " named TurnProgressSessionUpdate by its rule until it is pinned there"
    ]


# --- a field removed ----------------------------------------------------------


def test_removed_field_is_gone_and_the_rest_keeps_patch_semantics(tmp_path: Path) -> None:
    def edit(name: str, schema: Schema) -> None:
        if name.startswith("v2/"):
            del schema["$defs"]["SessionInfoUpdate"]["properties"]["updatedAt"]

    result = generate_and_probe(
        synthetic_release(tmp_path, NEXT, edit),
        tmp_path,
        """
        import json, sys
        from acp_schema import UNSET, v2
        msg = v2.decode_message(sys.argv[1].encode())
        update = msg.params.update
        print(json.dumps({
            "fields": [f for f in type(update).__struct_fields__ if f != "session_update"],
            "title_cleared": update.title is None,
            "meta_unchanged": update.meta is UNSET,
        }))
        """,
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        '{"sessionUpdate":"session_info_update","title":null,"updatedAt":"2026-01-01T00:00:00Z"}}}',
    )

    assert result == {
        "fields": ["title", "meta"],
        "title_cleared": True,
        "meta_unchanged": True,
    }


def test_removed_listed_patch_field_stops_generation_at_its_pointer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def edit(name: str, schema: Schema) -> None:
        if name.startswith("v2/"):
            del schema["$defs"]["UsageUpdate"]["properties"]["cost"]

    err = failure(synthetic_release(tmp_path, NEXT, edit), tmp_path, capsys)

    assert "#/$defs/UsageUpdate: patch fields not in schema: {'cost'}" in err


# --- per-release knowledge: a type introduced after the release ---------------


def without_v1_compaction(name: str, schema: Schema) -> None:
    if name.startswith("v1/"):
        drop_def(schema, "CompactionUpdate")


def test_patch_entry_does_not_apply_before_its_type_existed(tmp_path: Path) -> None:
    """v1 CompactionUpdate first shipped in 1.4.0: a release before it generates without it."""
    first = FIRST_RELEASE["v1"]["CompactionUpdate"]
    older = "1.3.0"
    assert release_key(older) < release_key(first)
    result = generate_and_probe(
        synthetic_release(tmp_path, older, without_v1_compaction),
        tmp_path,
        """
        import json
        import acp_schema
        from acp_schema import v1, v2
        print(json.dumps({
            "version": acp_schema.__version__,
            "v1": hasattr(v1, "CompactionUpdate"),
            "v2": hasattr(v2, "CompactionUpdate"),
        }))
        """,
    )

    assert result == {"version": f"{older}.{BINDINGS_REVISION}", "v1": False, "v2": True}


def test_patch_entry_is_required_from_its_first_release_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = FIRST_RELEASE["v1"]["CompactionUpdate"]

    err = failure(synthetic_release(tmp_path, first, without_v1_compaction), tmp_path, capsys)

    assert "#/$defs/CompactionUpdate: named in patch_fields.py but not in the schema" in err


def test_a_release_that_is_not_major_minor_patch_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = failure(synthetic_release(tmp_path, "3.0.0-beta.1", lambda n, s: None), tmp_path, capsys)

    assert "'3.0.0-beta.1' is not MAJOR.MINOR.PATCH" in err
