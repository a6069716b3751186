"""The generator on an older upstream release: @agentclientprotocol/sdk 2.0.0.

Its schema files are vendored under tests/data/sdk-2.0.0 (copied from the npm tarball's
package/schema/{v1,v2}, tarball checked against the registry's sha512 integrity; lock.json written
by `codegen.lock.write_lock`), so no test needs the network.

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

from codegen.lock import SCHEMA_FILES, verify_lock

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "sdk-2.0.0"
PACKAGE = "@agentclientprotocol/sdk"
VERSION = "2.0.0"

V2_LINE = (
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1",'
    '"update":{"sessionUpdate":"agent_message_chunk","messageId":"msg_1",'
    '"content":{"type":"text","text":"Hello from 2.0.0"}}}}'
)
V1_LINE = (
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1",'
    '"update":{"sessionUpdate":"agent_message_chunk",'
    '"content":{"type":"text","text":"Hello from 2.0.0"}}}}'
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
        "v2": describe(acp_schema.v2.decode_message(v2_line.encode())),
        "v1": describe(acp_schema.v1.decode_message(v1_line.encode())),
        "v1_unstable": type(acp_schema.v1.unstable.decode_message(v1_line.encode()).params).__name__,
        "v2_unstable": type(acp_schema.v2.unstable.decode_message(v2_line.encode()).params).__name__,
    }))
    """
)


class GenerationGap(AssertionError):
    """`python -m codegen` stopped on a schema shape the classifier does not know (a ShapeError)."""


def test_vendored_release_matches_its_lock() -> None:
    lock = verify_lock(DATA)
    assert (lock.package, lock.version) == (PACKAGE, VERSION)
    assert sorted(lock.files) == sorted(SCHEMA_FILES)


def test_generate_and_decode_sdk_2_0_0(tmp_path: Path) -> None:
    out = tmp_path / "acp_schema"
    gen = subprocess.run(
        [sys.executable, "-m", "codegen", "--schema-dir", str(DATA), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if gen.returncode != 0 and gen.stderr.startswith("codegen: #/"):
        raise GenerationGap(gen.stderr.strip())
    assert gen.returncode == 0, f"codegen failed:\n{gen.stdout}\n{gen.stderr}"

    # The output names the release it came from.
    header = (out / "v2" / "types.py").read_text().splitlines()[0]
    assert header.endswith(f"{PACKAGE}@{VERSION} schema/v2/schema.json"), header

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
    assert result["v2"] == {
        "message": "SessionUpdateMessage",
        "method": "session/update",
        "params": "UpdateSessionNotification",
        "session_id": "sess_1",
        "update": "AgentMessageChunk",
        "content": "TextContent",
        "text": "Hello from 2.0.0",
        "message_id": "msg_1",
    }
    assert result["v1"] == {
        "message": "SessionUpdateMessage",
        "method": "session/update",
        "params": "SessionNotification",
        "session_id": "sess_1",
        "update": "AgentMessageChunk",
        "content": "TextContent",
        "text": "Hello from 2.0.0",
        "message_id": None,
    }
    assert result["v1_unstable"] == "SessionNotification"
    assert result["v2_unstable"] == "UpdateSessionNotification"
