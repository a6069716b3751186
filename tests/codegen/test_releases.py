"""Generation from releases that are not schema/: synthetic releases derived from it.

Each test copies schema/ (the current release), edits it the way a next (or older) release of
@agentclientprotocol/sdk could, locks it under another release number and runs the generator:
it either produces bindings that decode the edited shapes, or stops with the JSON pointer of the
node it cannot map. Never silently wrong: three-state patch fields follow the schema's
descriptions, and where they differ from codegen/patch_fields.py (a patch type renamed or
removed, a patch field dropped) the generator says so, naming the type and field, and goes on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.__main__ import main as codegen_main
from codegen.lock import SCHEMA_FILES
from codegen.release import BINDINGS_REVISION
from helpers.paths import types_source
from helpers.schema_edits import (
    Schema,
    add_progress_variant,
    drop_def,
    generate_and_probe,
    rename_def,
    synthetic_release,
)

NEXT = "9.0.0"


def warnings(schema_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """Run the generator in-process; it must succeed. Its warnings, one a line."""
    out = tmp_path / "out" / "acp_schema"
    assert codegen_main(["--schema-dir", str(schema_dir), "--out", str(out)]) == 0
    return [line for line in capsys.readouterr().err.splitlines() if "warning" in line]


def failure(schema_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run the generator in-process; it must fail, write nothing, and explain on stderr."""
    out = tmp_path / "out" / "acp_schema"
    assert codegen_main(["--schema-dir", str(schema_dir), "--out", str(out)]) == 1
    assert not out.exists()
    return capsys.readouterr().err


# --- a type renamed -----------------------------------------------------------


def test_renamed_patch_type_keeps_its_patch_semantics_and_is_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def edit(name: str, schema: Schema) -> None:
        schema.update(rename_def(schema, "CompactionUpdate", "ContextCompactionUpdate"))

    found = warnings(synthetic_release(tmp_path, NEXT, edit), tmp_path, capsys)

    prefix = "codegen: warning: patch fields:"
    for name in SCHEMA_FILES:
        assert (
            f"{prefix} {name} CompactionUpdate: the schema has no such type; "
            "codegen/patch_fields.py lists it as a patch type"
        ) in found
        for field in ("_meta", "error", "summary"):
            assert (
                f"{prefix} {name} ContextCompactionUpdate.{field}: the schema describes it as a "
                "patch field (generated three-state); codegen/patch_fields.py does not list it"
            ) in found
    types_py = types_source(tmp_path / "out" / "acp_schema" / "v2")
    # the `compaction_update` variant keeps its pinned class name (codegen/names.py)
    body = types_py.split("\nclass CompactionUpdate(", 1)[1].split("\nclass ", 1)[0]
    assert body.count("Three-state patch field") == 3  # summary, error, _meta


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


def test_removed_listed_patch_field_is_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def edit(name: str, schema: Schema) -> None:
        if name.startswith("v2/"):
            del schema["$defs"]["UsageUpdate"]["properties"]["cost"]

    found = warnings(synthetic_release(tmp_path, NEXT, edit), tmp_path, capsys)

    assert found == [
        f"codegen: warning: patch fields: {name} UsageUpdate.cost: the schema has no such "
        "field; codegen/patch_fields.py lists it"
        for name in ("v2/schema.json", "v2/schema.unstable.json")
    ]


def test_patch_wording_dropped_upstream_is_a_plain_field_and_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The descriptions decide: a field whose description no longer says patch semantics is
    generated as a plain optional field, and the table's disagreement is a warning."""

    def edit(name: str, schema: Schema) -> None:
        if name == "v2/schema.json":
            cost = schema["$defs"]["UsageUpdate"]["properties"]["cost"]
            cost["description"] = "Cumulative session cost."

    found = warnings(synthetic_release(tmp_path, NEXT, edit), tmp_path, capsys)

    assert found == [
        "codegen: warning: patch fields: v2/schema.json UsageUpdate.cost: the schema does not "
        "describe it as a patch field (generated as a plain optional field); "
        "codegen/patch_fields.py lists it"
    ]
    types_py = types_source(tmp_path / "out" / "acp_schema" / "v2")
    usage = types_py.split("\nclass UsageUpdate(", 1)[1].split("\nclass ", 1)[0]
    assert "Three-state" not in usage


# --- a release without a listed patch type ------------------------------------


def without_v1_compaction(name: str, schema: Schema) -> None:
    if name.startswith("v1/"):
        drop_def(schema, "CompactionUpdate")


def test_a_release_without_a_listed_patch_type_generates_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """v1 CompactionUpdate first shipped in 1.4.0: an older release (or a snapshot that moved the
    type) generates without it; the table's entry is a warning, never a stop."""
    older = "1.3.0"
    schema_dir = synthetic_release(tmp_path, older, without_v1_compaction)
    found = warnings(schema_dir, tmp_path, capsys)
    assert found == [
        f"codegen: warning: patch fields: {name} CompactionUpdate: the schema has no such type; "
        "codegen/patch_fields.py lists it as a patch type"
        for name in ("v1/schema.json", "v1/schema.unstable.json")
    ]
    result = generate_and_probe(
        schema_dir,
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


def test_a_release_that_is_not_major_minor_patch_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = failure(synthetic_release(tmp_path, "3.0.0-beta.1", lambda n, s: None), tmp_path, capsys)

    assert "'3.0.0-beta.1' is not MAJOR.MINOR.PATCH" in err
