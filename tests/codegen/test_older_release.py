"""The generator on older upstream releases: @agentclientprotocol/sdk 2.0.0 and 2.2.0.

Their schema files are vendored under tests/data/sdk-<version> (written by `python -m
codegen.vendor fetch <version> tests/data/sdk-<version>`: the npm tarball checked against the
registry's sha512 integrity, package/schema/{v1,v2} copied, lock.json written), so no test needs
the network. (2.3.0 ships the same four files as 2.4.0, byte for byte, so it adds nothing.)

The generated package is imported in a fresh interpreter whose path holds only the temporary
output, so the committed generated/acp_schema cannot stand in for it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codegen.lock import SCHEMA_FILES, NpmRelease, verify_lock
from codegen.release import BINDINGS_REVISION
from helpers.paths import ROOT, types_source

PACKAGE = "@agentclientprotocol/sdk"
RELEASES = ("2.0.0", "2.2.0")

V2_LINE = (
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1",'
    '"update":{"sessionUpdate":"agent_message_chunk","messageId":"msg_1",'
    '"content":{"type":"text","text":"Hello"}}}}'
)
V1_LINE = (
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1",'
    '"update":{"sessionUpdate":"agent_message_chunk",'
    '"content":{"type":"text","text":"Hello"}}}}'
)

# Runs in the fresh interpreter; prints one JSON object.
PROBE = textwrap.dedent(
    """
    import json, sys
    import acp_schema, acp_schema.v1, acp_schema.v1.unstable, acp_schema.v2, acp_schema.v2.unstable

    def describe(msg):
        update = msg.params.update
        return {
            "message": type(msg).__name__,
            "method": msg.method,
            "params": type(msg.params).__name__,
            "session_id": msg.params.session_id,
            "update": type(update).__name__,
            "content": type(update.content).__name__,
            "text": update.content.text,
            "message_id": None if update.message_id is acp_schema.UNSET else update.message_id,
        }

    v2_line, v1_line = sys.argv[1], sys.argv[2]
    print(json.dumps({
        "package_file": acp_schema.__file__,
        "version": acp_schema.__version__,
        "v2": describe(acp_schema.v2.decode_message(v2_line.encode())),
        "v1": describe(acp_schema.v1.decode_message(v1_line.encode())),
        "v1_unstable": type(acp_schema.v1.unstable.decode_message(v1_line.encode()).params).__name__,
        "v2_unstable": type(acp_schema.v2.unstable.decode_message(v2_line.encode()).params).__name__,
    }))
    """
)


class GenerationGap(AssertionError):
    """`python -m codegen` stopped on a schema shape the classifier does not know (a ShapeError)."""


def data_dir(version: str) -> Path:
    return ROOT / "tests" / "data" / f"sdk-{version}"


@pytest.mark.parametrize("version", RELEASES)
def test_vendored_release_matches_its_lock(version: str) -> None:
    lock = verify_lock(data_dir(version))
    assert lock.source == NpmRelease(PACKAGE, version)
    assert sorted(lock.files) == sorted(SCHEMA_FILES)


def generate(version: str, out: Path) -> None:
    gen = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen",
            "--schema-dir",
            str(data_dir(version)),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if gen.returncode != 0 and gen.stderr.startswith("codegen: #/"):
        raise GenerationGap(gen.stderr.strip())
    assert gen.returncode == 0, f"codegen failed:\n{gen.stdout}\n{gen.stderr}"


def field_docstring(types_py: str, class_name: str, field: str) -> str | None:
    """The docstring under `field` in class `class_name` of a generated types.py, or None."""
    body = types_py.split(f"\nclass {class_name}(", 1)[1].split("\nclass ", 1)[0]
    lines = body.splitlines()
    for index, line in enumerate(lines):
        if line.strip().startswith(f"{field}:"):
            return "\n".join(lines[index + 1 : index + 8])
    return None


@pytest.mark.parametrize("version", RELEASES)
def test_generate_and_decode_release(version: str, tmp_path: Path) -> None:
    out = tmp_path / "acp_schema"
    generate(version, out)

    # The output names the release it came from.
    header = (out / "v2" / "types.py").read_text().splitlines()[0]
    assert header.endswith(f"{PACKAGE}@{version} schema/v2/schema.json"), header

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONPATH"] = str(tmp_path)
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, V2_LINE, V1_LINE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode == 0, f"import/decode failed:\n{probe.stdout}\n{probe.stderr}"
    result = json.loads(probe.stdout)

    assert Path(result["package_file"]).resolve() == (out / "__init__.py").resolve()
    assert result["version"] == f"{version}.{BINDINGS_REVISION}"
    assert result["v2"] == {
        "message": "SessionUpdateMessage",
        "method": "session/update",
        "params": "UpdateSessionNotification",
        "session_id": "sess_1",
        "update": "AgentMessageChunk",
        "content": "TextContent",
        "text": "Hello",
        "message_id": "msg_1",
    }
    assert result["v1"] == {
        "message": "SessionUpdateMessage",
        "method": "session/update",
        "params": "SessionNotification",
        "session_id": "sess_1",
        "update": "AgentMessageChunk",
        "content": "TextContent",
        "text": "Hello",
        "message_id": None,
    }
    assert result["v1_unstable"] == "SessionNotification"
    assert result["v2_unstable"] == "UpdateSessionNotification"


def test_release_specific_patch_fields(tmp_path: Path) -> None:
    """v2 TerminalUpdate.size arrived in 2.2.0 as a patch field (ALL picks it up); 2.0.0 has
    no such field, and its TerminalUpdate's other patch fields are the same."""
    docs = {}
    for version in RELEASES:
        generate(version, tmp_path / version / "acp_schema")
        types_py = types_source(tmp_path / version / "acp_schema" / "v2")
        docs[version] = {
            field: field_docstring(types_py, "TerminalUpdate", field)
            for field in ("size", "cwd", "output")
        }
    assert docs["2.0.0"]["size"] is None
    for version in RELEASES:
        assert "Three-state patch field" in (docs[version]["cwd"] or ""), docs[version]
    assert "Three-state patch field" in (docs["2.2.0"]["size"] or ""), docs["2.2.0"]
