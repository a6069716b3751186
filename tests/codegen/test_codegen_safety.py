"""Schema text is data, never code: a hostile schema generates code that imports and behaves."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from codegen.classify import ShapeError, classify
from codegen.emit import copy_runtime, emit

NASTY = "He said \"\"\"hi\"\"\" and '''bye''' \\ {{ not_jinja }} {% raw %}\nnew line\r\x00 é 🎉"
TAGS = ['a"b', "back\\slash", "new\nline", "{{ x }}"]


def ref(name: str) -> dict[str, Any]:
    return {"allOf": [{"$ref": f"#/$defs/{name}"}]}


def variant(tag: str) -> dict[str, Any]:
    return {
        "description": NASTY,
        "type": "object",
        "properties": {"kind": {"type": "string", "const": tag}, "x": {"type": "integer"}},
        "required": ["kind"],
    }


def nasty_schema() -> dict[str, Any]:
    params = {"anyOf": [{"anyOf": [{"title": "T", **ref("class")}]}, {"type": "null"}]}
    result = {"anyOf": [{"anyOf": [{"title": "T", **ref("my-type")}]}]}
    return {
        "$defs": {
            "class": {
                "description": NASTY,
                "type": "object",
                "properties": {
                    "class": {"description": NASTY, "type": "string"},
                    "with-dash": {"type": "integer", "format": "uint16"},
                    "0start": {"type": ["string", "null"]},
                    "naïve ünïcode": {"type": "boolean"},
                    "_meta": {"type": ["object", "null"], "additionalProperties": True},
                    "choice": {"$ref": "#/$defs/Choice"},
                    "union": {"$ref": "#/$defs/Tagged"},
                },
                "required": ["class", "union"],
                "x-method": 'weird/"method"',
                "x-side": "agent",
            },
            "my-type": {
                "type": "object",
                "properties": {},
                "x-method": 'weird/"method"',
                "x-side": "agent",
            },
            "Choice": {
                "description": NASTY,
                "anyOf": [{"type": "string", "const": t, "description": NASTY} for t in TAGS]
                + [{"title": "other", "type": "string"}],
            },
            "Tagged": {
                "description": NASTY,
                "anyOf": [variant(t) for t in TAGS]
                + [
                    {
                        "title": "other",
                        "type": "object",
                        "properties": {"kind": {"type": "string"}},
                        "required": ["kind"],
                        "additionalProperties": True,
                    }
                ],
            },
            "Error": {
                "type": "object",
                "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
                "required": ["code", "message"],
            },
            "ClientRequest": {
                "x-docs-ignore": True,
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "method": {"type": "string"},
                    "params": params,
                },
            },
            "AgentResponse": {
                "x-docs-ignore": True,
                "anyOf": [{"type": "object", "properties": {"id": {}, "result": result}}],
            },
        }
    }


def test_hostile_schema_generates_safe_working_code(tmp_path: Path) -> None:
    module = classify(nasty_schema(), version="v3", unstable=False, source=NASTY, sha256="0" * 64)
    out = tmp_path / "acp_schema"
    emit([module], out, version="0.0.0.0")
    copy_runtime(out)
    probe = textwrap.dedent(
        f"""
        import inspect, json, msgspec
        import acp_schema.v3 as m
        NASTY = {NASTY!r}
        TAGS = {TAGS!r}
        assert inspect.cleandoc(m.Class.__doc__) == inspect.cleandoc(NASTY), m.Class.__doc__
        line = json.dumps({{"jsonrpc": "2.0", "id": 1, "method": 'weird/"method"', "params": {{
            "class": NASTY, "with-dash": 7, "0start": None, "naïve ünïcode": True, "_meta": {{}},
            "choice": TAGS[2], "union": {{"kind": TAGS[0], "x": 1}}}}}})
        msg = m.decode_message(line)
        assert type(msg).__name__ == "WeirdMethodMessage", type(msg)
        assert msg.params.class_ == NASTY and msg.params.with_dash == 7
        assert type(msg.params.union).__name__ != "UnknownTagged"
        assert json.loads(m.encode_message(msg)) == json.loads(line)
        unknown = m.decode_message(line.replace("back", "front"))
        assert json.loads(m.encode_message(unknown)) == json.loads(line.replace("back", "front"))
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    for path in out.rglob("*.py"):
        compile(path.read_text(), str(path), "exec")  # every file is valid Python
    assert "not_jinja" in (out / "v3" / "types.py").read_text()  # rendered as text, not evaluated
    assert json.dumps(nasty_schema())  # the fixture itself is plain JSON data


@pytest.mark.parametrize("name", ['"quoted"', "back\\slash", "new\nline"])
def test_field_names_msgspec_cannot_encode_fail_generation_loudly(name: str) -> None:
    schema = nasty_schema()
    schema["$defs"]["class"]["properties"][name] = {"type": "string"}
    with pytest.raises(ShapeError, match="cannot use"):
        classify(schema, version="v3", unstable=False, source="x", sha256="0" * 64)
