"""Seed inputs for the fuzzers: real ACP messages, plus a libFuzzer dictionary.

    python fuzz/seeds.py [--out fuzz/corpus/seeds] [--dict fuzz/corpus/acp.dict]

writes one file per seed line into `--out` (named by its sha1, so reruns are idempotent)
and the dictionary of JSON / ACP tokens for `-dict=`. tests/wire/test_fuzz.py imports
`corpus()` from here, so the hypothesis tests and atheris start from the same messages.

Sources, in order:

- `BUILTIN`: a few hand-written messages (always there);
- `message` of every row of `docs-examples.jsonl` (the ACP documentation examples);
- the lines of `make_streams.py --version v2|v1 --messages 200 --seed 1` (both directions).

`docs-examples.jsonl` is `tests/data/conformance/` in the repository (or `$ACP_CONFORMANCE`,
the folder or the file); it is required. `make_streams.py` is looked up in `$ACP_CONFORMANCE`,
then `../shared/conformance` next to the repository; its lines are added when it is there.
Stdlib only, apart from `acp_schema` for the dictionary's method names.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FUZZ = Path(__file__).resolve().parent

BUILTIN: tuple[bytes, ...] = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,'
    b'"info":{"name":"fuzz","version":"0"}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,'
    b'"clientCapabilities":{}}}',
    b'{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}',
    b'{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"sess_1",'
    b'"prompt":[{"type":"text","text":"hello"}]}}',
    b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"sess_1"}}',
    b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":3}}',
    b'{"jsonrpc":"2.0","id":null,"method":"_vendor/ping","params":[1,{"a":null}]}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":'
    b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}',
    b'{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}',
    b'{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}',
    b'[{"jsonrpc":"2.0","id":8,"method":"_x"},{"jsonrpc":"2.0","method":"_y"}]',
    # near and past the depth where Python's recursion limit stops msgspec
    b'{"jsonrpc":"2.0","id":9,"method":"_x","params":' + b"[" * 400 + b"]" * 400 + b"}",
    b'{"jsonrpc":"2.0","id":9,"method":"_x","params":' + b'{"a":' * 1200 + b"1" + b"}" * 1201,
    b'{"jsonrpc":"2.0","id":1e400,"method":"_x","params":[' + b"9" * 400 + b",-0,1e-400]}",
)


def fuzzed_codecs() -> dict[str, Any]:
    """The decoders under fuzzing, by name: each side's codec per version, the any-direction
    message codecs and the codec used before `initialize`. Imported here, not at the top, so
    that atheris can instrument the modules before this is called."""
    import acp_schema.v1 as v1
    import acp_schema.v2 as v2
    from acpwire._wire.versions import bootstrap_codec

    return {
        "v2.agent": v2.AGENT_CODEC,
        "v2.client": v2.CLIENT_CODEC,
        "v1.agent": v1.AGENT_CODEC,
        "v1.client": v1.CLIENT_CODEC,
        "v2.any": v2.MESSAGE_CODEC,
        "v1.any": v1.MESSAGE_CODEC,
        "bootstrap": bootstrap_codec(),
    }


REPO_CONFORMANCE = ROOT / "tests" / "data" / "conformance"


def _configured_dir() -> Path | None:
    configured = os.environ.get("ACP_CONFORMANCE")
    if not configured:
        return None
    base = Path(configured)
    return base.parent if base.is_file() else base


def docs_examples_file() -> Path:
    """docs-examples.jsonl: `$ACP_CONFORMANCE` or the copy in tests/data/conformance."""
    path = (_configured_dir() or REPO_CONFORMANCE) / "docs-examples.jsonl"
    if not path.is_file():
        raise FileNotFoundError(
            f"conformance examples missing: {path} (restore tests/data/conformance from git, "
            "or point ACP_CONFORMANCE at a folder holding docs-examples.jsonl)"
        )
    return path


def make_streams_script() -> Path:
    """make_streams.py: `$ACP_CONFORMANCE` or the copy in tests/data/conformance."""
    path = (_configured_dir() or REPO_CONFORMANCE) / "make_streams.py"
    if not path.is_file():
        raise FileNotFoundError(
            f"make_streams.py missing: {path} (restore tests/data/conformance from git, "
            "or point ACP_CONFORMANCE at a folder holding it)"
        )
    return path


def _compact(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@functools.cache
def docs_messages() -> tuple[bytes, ...]:
    """The `message` of each documentation example, as one compact JSON line."""
    rows = (json.loads(line) for line in docs_examples_file().open() if line.strip())
    return tuple(_compact(row["message"]) for row in rows if "message" in row)


@functools.cache
def stream_lines(version: str, messages: int = 200, seed: int = 1) -> tuple[bytes, ...]:
    """The lines `make_streams.py` writes for one protocol version."""
    argv = [sys.executable, str(make_streams_script()), "--version", version]
    argv += ["--messages", str(messages), "--seed", str(seed)]
    out = subprocess.run(argv, capture_output=True, check=True, timeout=60).stdout
    return tuple(line for line in out.splitlines() if line.strip())


def corpus(streams: bool = True) -> list[bytes]:
    """Every seed line, without duplicates, in a stable order."""
    lines = [*BUILTIN, *docs_messages()]
    if streams:
        lines += [*stream_lines("v2"), *stream_lines("v1")]
    return list(dict.fromkeys(lines))


# --------------------------------------------------------------------------- dictionary

JSON_TOKENS = (
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    '"',
    "null",
    "true",
    "false",
    "-0",
    "1e400",
    "-1e400",
    "1.5",
    "18446744073709551616",
    "\\u0000",
    "\\ud800",
    "\\\\",
    '"jsonrpc":"2.0"',
    '"id":',
    '"method":',
    '"params":',
    '"result":',
    '"error":',
    '"code":',
    '"message":',
    '"data":',
    '"_meta":',
)


def _keys_and_tags(value: object, out: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            out.add(f'"{key}":')
            if key in ("type", "sessionUpdate", "kind", "outcome", "status") and isinstance(
                item, str
            ):
                out.add(f'"{item}"')
            _keys_and_tags(item, out)
    elif isinstance(value, list):
        for item in value:
            _keys_and_tags(item, out)


def dictionary_tokens(lines: list[bytes]) -> list[str]:
    """JSON syntax, every method name of v1 and v2, and the keys and tags the seeds use."""
    tokens = set(JSON_TOKENS)
    try:
        import acp_schema.v1 as v1
        import acp_schema.v2 as v2

        for module in (v1, v2):
            tokens.update(f'"{name}"' for name in module.METHODS)
    except ImportError:  # run without the package on the path: the seeds still name most
        pass
    for line in lines:
        try:
            _keys_and_tags(json.loads(line), tokens)
        except (ValueError, RecursionError):
            continue
    return sorted(tokens)


def _dict_entry(token: str) -> str:
    escaped = "".join(
        f"\\x{b:02x}" if b < 0x20 or b >= 0x7F or b in b'"\\' else chr(b) for b in token.encode()
    )
    return f'"{escaped}"'


def write(out: Path, dictionary: Path | None) -> int:
    """Write the seed corpus (and the dictionary); returns the number of seeds."""
    out.mkdir(parents=True, exist_ok=True)
    lines = corpus()
    for line in lines:
        (out / hashlib.sha1(line).hexdigest()).write_bytes(line)
    if dictionary is not None:
        dictionary.parent.mkdir(parents=True, exist_ok=True)
        entries = [_dict_entry(t) for t in dictionary_tokens(lines) if len(t.encode()) <= 64]
        dictionary.write_text("\n".join(entries) + "\n")
    return len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=FUZZ / "corpus" / "seeds")
    parser.add_argument("--dict", type=Path, default=FUZZ / "corpus" / "acp.dict")
    args = parser.parse_args()
    n = write(args.out, args.dict)
    streams = make_streams_script()
    print(f"wrote {n} seeds to {args.out} and {args.dict}")
    print(f"  examples: {docs_examples_file()}; streams: {streams}")


if __name__ == "__main__":
    main()
