"""Smoke test of an installed acp-schema wheel: run with `python -I` outside the source tree.

    python -I smoke_schema.py <expected acp_schema.__version__>

Checks that acp_schema comes from site-packages, that trio is not installed (the bindings need
msgspec only), and that a v1 and a v2 `session/update` line decode to typed values and encode
back to the same JSON.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import sysconfig
from pathlib import Path

import acp_schema
from acp_schema import v1, v2

V1_LINE = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1",'
    b'"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi v1"}}}}'
)
V2_LINE = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1",'
    b'"update":{"sessionUpdate":"agent_message_chunk","messageId":"m1",'
    b'"content":{"type":"text","text":"hi v2"}}}}'
)


def main() -> None:
    expected_version = sys.argv[1]
    site_packages = Path(sysconfig.get_paths()["purelib"]).resolve()
    package_dir = Path(acp_schema.__file__).resolve().parent
    assert package_dir.parent == site_packages, f"acp_schema imported from {package_dir}"
    assert importlib.util.find_spec("trio") is None, "trio is installed next to acp-schema"
    assert acp_schema.__version__ == expected_version, acp_schema.__version__

    v1_message = v1.decode_message(V1_LINE)
    v2_message = v2.decode_message(V2_LINE)
    assert isinstance(v1_message.params.update, v1.AgentMessageChunk), v1_message
    assert isinstance(v2_message.params.update, v2.AgentMessageChunk), v2_message
    for line, message, codec in ((V1_LINE, v1_message, v1), (V2_LINE, v2_message, v2)):
        assert json.loads(codec.encode_message(message)) == json.loads(line)

    print(f"acp-schema {acp_schema.__version__} from {package_dir}, trio absent")
    for name, release in acp_schema.SCHEMA_RELEASES.items():
        print(f"  {name}: {release[0]}")
    print(f"  v1 {type(v1_message).__name__}: {v1_message.params.update.content.text!r}")
    print(f"  v2 {type(v2_message).__name__}: {v2_message.params.update.content.text!r}")
    print("  both encode back to the same JSON")


if __name__ == "__main__":
    main()
