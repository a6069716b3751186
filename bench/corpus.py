"""The benchmark corpus: realistic agent -> client ACP traffic, built once and cached.

- `load(version, messages, seed)`: the lines `make_streams.py --version V --messages N --seed S
  --direction agent` writes (session updates of every variant, permission requests, v1 fs and
  terminal requests, `session/prompt` responses), plus the request id -> method table a client
  would hold to type those responses (`result_method`). The table comes from the same traffic's
  client side (`--direction client`, same seed): the client's requests and their ids.
- `big_line(version)`: one ~1 MB `tool_call_update` (v2: a diff with a git patch; v1: a diff with
  oldText/newText), text made by make_streams' own generator (non-ASCII, emoji, code).

make_streams.py is the copy in tests/data/conformance (or $ACP_CONFORMANCE's). Everything is cached in bench/results/corpus/ (gitignored), keyed by the
arguments and by make_streams.py's sha256, so a changed generator rebuilds the corpus.

    python bench/corpus.py --version v1 --messages 5000     # build (or reuse) and summarize
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import importlib.util
import json
import os
import random
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

from report import RESULTS, ROOT

CACHE = RESULTS / "corpus"
BIG_TARGET_BYTES = 1_000_000


def _script() -> Path:
    folder = Path(os.environ.get("ACP_CONFORMANCE") or ROOT / "tests" / "data" / "conformance")
    script = folder / "make_streams.py"
    if not script.is_file():
        raise SystemExit(f"make_streams.py not found at {script} (restore tests/data/conformance)")
    return script


def _generator_hash() -> str:
    return hashlib.sha256(_script().read_bytes()).hexdigest()[:12]


def _make_streams(version: str, messages: int, seed: str, direction: str) -> bytes:
    cmd = [sys.executable, str(_script()), "--version", version, "--messages", str(messages)]
    cmd += ["--seed", seed, "--direction", direction]
    return subprocess.run(cmd, check=True, capture_output=True).stdout


@dataclass
class Corpus:
    version: str
    seed: str
    lines: list[bytes]
    result_methods: dict[Any, str] = field(repr=False)
    """id of each request the client sent -> its method (to type the responses)."""

    @property
    def nbytes(self) -> int:
        return sum(len(line) for line in self.lines)

    def result_method(self, request_id: Any) -> str | None:
        return self.result_methods.get(request_id)

    @cached_property
    def labels(self) -> list[tuple[str, str, str]]:
        """(kind, method, sessionUpdate tag or "") per line; kind: request|notification|response."""
        out = []
        for line in self.lines:
            msg = json.loads(line)
            if "method" not in msg:
                out.append(("response", self.result_methods.get(msg.get("id"), "?"), ""))
                continue
            kind = "request" if "id" in msg else "notification"
            tag = ""
            if msg["method"] == "session/update":
                tag = msg["params"]["update"]["sessionUpdate"]
            out.append((kind, msg["method"], tag))
        return out

    def summary(self) -> str:
        counts = collections.Counter(
            (kind, method, tag) for kind, method, tag in self.labels
        ).most_common()
        head = (
            f"{self.version} corpus: {len(self.lines)} agent->client lines, "
            f"{self.nbytes / 1e6:.2f} MB, seed {self.seed}"
        )
        rows = [f"  {n:7d}  {kind:12} {method} {tag}" for (kind, method, tag), n in counts]
        return "\n".join([head, *rows])


def load(version: str, messages: int, seed: str = "1") -> Corpus:
    CACHE.mkdir(parents=True, exist_ok=True)
    stem = CACHE / f"{version}-seed{seed}-n{messages}-{_generator_hash()}"
    lines_path, ids_path = stem.with_suffix(".ndjson"), stem.with_suffix(".ids.json")
    if not (lines_path.exists() and ids_path.exists()):
        lines = _make_streams(version, messages, seed, "agent").splitlines()
        ids = _client_request_methods(version, seed, lines)
        ids_path.write_text(json.dumps(sorted(ids.items(), key=lambda kv: str(kv[0]))))
        lines_path.write_bytes(b"\n".join(lines) + b"\n")
    lines = lines_path.read_bytes().splitlines()
    pairs = json.loads(ids_path.read_text())
    return Corpus(version, seed, lines, {k: v for k, v in pairs})


def _client_request_methods(version: str, seed: str, agent_lines: list[bytes]) -> dict[Any, str]:
    """The id -> method table of the client's requests, covering every response in the corpus.

    Both directions come from one generator run per seed, so the client side of the same
    traffic holds the requests the agent answers (ids are per-sender counters, unique there)."""
    wanted = {
        msg["id"]
        for msg in (json.loads(line) for line in agent_lines)
        if "method" not in msg and "id" in msg
    }
    n = 2 * len(wanted) + 16  # a turn's client side: its prompt and a few permission answers
    while True:
        table: dict[Any, str] = {}
        for line in _make_streams(version, n, seed, "client").splitlines():
            msg = json.loads(line)
            if "method" in msg and "id" in msg:
                table[msg["id"]] = msg["method"]
        if wanted <= table.keys():
            return table
        if n > 4 * len(agent_lines):
            missing = sorted(wanted - table.keys(), key=str)[:5]
            raise RuntimeError(f"no client request for response ids {missing}")
        n *= 2


# --------------------------------------------------------------------------- the 1 MB line


def _make_streams_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_streams", _script())
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _big_message(version: str) -> dict[str, Any]:
    ms = _make_streams_module()
    rng = random.Random(f"acp-bench-big:{version}")
    text = ms.TextGen(rng)
    session = "sess_" + f"{rng.getrandbits(64):016x}"
    path = ms.ROOT + "/src/protocol/session.rs"
    rel = path[len(ms.ROOT) + 1 :]

    def lines_until(limit: int) -> list[str]:
        out, size = [], 0
        while size < limit:
            line = text.sentence(10, 110).replace("\n", " ")
            out.append(line)
            size += len(line.encode()) + 1
        return out

    if version == "v2":
        hunks = [f"diff --git a/{rel} b/{rel}", f"--- a/{rel}", f"+++ b/{rel}"]
        size = 0
        start = 1
        while size < BIG_TARGET_BYTES:
            body = [rng.choice(" -+") + line for line in lines_until(rng.randint(400, 4000))]
            hunks.append(f"@@ -{start},{len(body)} +{start},{len(body)} @@")
            hunks += body
            start += len(body) + rng.randint(5, 60)
            size += sum(len(b.encode()) + 1 for b in body)
        content = [
            {
                "type": "diff",
                "changes": [
                    {
                        "operation": "modify",
                        "path": path,
                        "fileType": "text",
                        "mimeType": "text/x-rust",
                    }
                ],
                "patch": {"format": "git_patch", "text": "\n".join(hunks) + "\n"},
            }
        ]
    else:
        old = lines_until(BIG_TARGET_BYTES // 2)
        new = list(old)
        for _ in range(len(new) // 20):
            new[rng.randrange(len(new))] = text.sentence(10, 110).replace("\n", " ")
        content = [
            {
                "type": "diff",
                "path": path,
                "oldText": "\n".join(old) + "\n",
                "newText": "\n".join(new) + "\n",
            }
        ]
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_big_000001",
        "status": "completed",
        "content": content,
        "locations": [{"path": path, "line": 1}],
        "rawOutput": {"ok": True, "bytes": BIG_TARGET_BYTES},
    }
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": update},
    }


def big_line(version: str) -> bytes:
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{version}-big-{_generator_hash()}.json"
    if not path.exists():
        message = _big_message(version)
        path.write_bytes(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode())
    return path.read_bytes()


def code_state() -> str:
    """Which code was measured: the commit, plus uncommitted changes under generated/ and runtime/."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "generated", "runtime"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.split("\n")
    except OSError:
        return "code: unknown (no git)"
    changed = sorted(line[3:] for line in dirty if line.strip())
    extra = f" + uncommitted changes in {', '.join(changed)}" if changed else ""
    return f"code: git {sha or '?'}{extra}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", choices=["v1", "v2"], default="v2")
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--seed", default="1")
    args = parser.parse_args()
    corpus = load(args.version, args.messages, args.seed)
    print(corpus.summary())
    print(f"  response ids typed through the client's requests: {len(corpus.result_methods)}")
    big = big_line(args.version)
    print(f"  big line: {len(big) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
