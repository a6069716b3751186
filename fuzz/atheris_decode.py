"""Coverage-guided fuzzing (atheris, i.e. libFuzzer) of acpwire's decode entry points.

    python fuzz/seeds.py                  # seed corpus + dictionary under fuzz/corpus/
    python fuzz/atheris_decode.py fuzz/corpus/work fuzz/corpus/seeds \\
        -dict=fuzz/corpus/acp.dict -artifact_prefix=fuzz/corpus/crashes/ -max_total_time=120

`nox -s fuzz` does both (after the hypothesis tests); arguments after `--` go to libFuzzer
(`nox -s fuzz -- -max_total_time=600`). New inputs go to the first corpus folder; a crash
stops the run and leaves the input in `crash-<sha1>` (under -artifact_prefix); replay it
with `python fuzz/atheris_decode.py <that file>`.

Each input, as one line, goes through:

- `CLIENT_CODEC.decode` and `AGENT_CODEC.decode` of v2 and v1, `decode_message` of both and
  the bootstrap codec, a response's result typed as one of the methods (picked from a hash of
  the input): only `msgspec.DecodeError` (`ValidationError` is a subclass) may escape, and a
  decoded message must encode again;
- `JsonRpcCore.receive_line` on a fresh core per codec, with two requests of ours pending
  (ids 0 and 1) so responses are typed too: nothing may escape; events are Call / Reply /
  Answer; at most one message goes out per line, JSON-RPC responses only; every Call that is
  a request is answered with `respond` and nothing stays in flight;
- `LineReader.feed` in two chunks (limit and cut from the input's first and last bytes) then
  `eof`: nothing may escape, lines hold no newline, the buffer stays under the limit; each
  line it yields goes to a fresh v2 agent core, checked as above.

Exceptions of known open bugs (`KNOWN_BUGS`, each with a strict xfail test in
tests/wire/test_fuzz.py; none at the moment) are counted and reported, first occurrence with the
input, instead of stopping the run, so fuzzing goes on past them; `--strict` makes them
crashes too.
"""

from __future__ import annotations

import argparse
import os
import sys
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import atheris

ROOT = Path(__file__).resolve().parent.parent
for part in ("generated", "runtime", "."):  # when run from a checkout without an install
    if str(ROOT / part) not in sys.path:
        sys.path.insert(0, str(ROOT / part))

with atheris.instrument_imports():
    import msgspec

    import acp_schema.v1 as v1
    import acp_schema.v2 as v2
    from acp_schema import MessageCodec, encode_message
    from acpwire._wire.framing import LineReader, OversizedLine
    from acpwire._wire.jsonrpc import Answer, Call, JsonRpcCore, Reply
    from fuzz.seeds import fuzzed_codecs

# Exceptions of known, open bugs in the codecs (each with a strict xfail test in
# tests/wire/test_fuzz.py), tolerated so fuzzing goes past them. Empty: none is open (it held
# (UnicodeDecodeError, RecursionError) until 74eec51).
KNOWN_BUGS: tuple[type[BaseException], ...] = ()
STRICT = False
SEEN: Counter[str] = Counter()

CODECS: dict[str, MessageCodec] = fuzzed_codecs()  # after the instrumented imports above
CORE_CODECS = [c for name, c in CODECS.items() if not name.endswith(".any")]
METHODS: list[str | None] = [None, *sorted(v2.METHODS), *sorted(v1.METHODS)]
LIMITS = (1, 8, 64, 4096, 64 * 1024 * 1024)


def known(where: str, exc: BaseException, data: bytes) -> None:
    """Tolerate (count, report) a known bug's exception, or re-raise anything else."""
    if STRICT or not isinstance(exc, KNOWN_BUGS):
        raise exc
    kind = f"{where}: {type(exc).__name__}"
    SEEN[kind] += 1
    n = SEEN[kind]
    if n & (n - 1) == 0:  # the first time, then at powers of two
        first = f", e.g. {data[:160]!r}" if n == 1 else ""
        print(f"[known bug] {kind} x{n}{first}", file=sys.stderr, flush=True)


def check_decode(codec: MessageCodec, data: bytes, method: str | None) -> None:
    try:
        message = codec.decode(data, lambda id: method)
    except msgspec.DecodeError:
        return
    except Exception as exc:
        known("decode", exc, data)
        return
    encode_message(message)


def response_ok(message: Any) -> None:
    assert isinstance(message, dict), message
    assert message.get("jsonrpc") == "2.0" and "id" in message, message
    assert ("result" in message) != ("error" in message), message
    if "error" in message:
        error = message["error"]
        assert type(error.get("code")) is int and isinstance(error.get("message"), str), message


def check_core(codec: MessageCodec, line: bytes) -> None:
    core = JsonRpcCore(codec)
    asked = sorted(codec.outbound)[:2]
    for method in asked:
        core.request(codec.outbound[method], None)
    events = core.receive_line(line)  # nothing may escape
    sent: list[bytes] = []
    for event in events:
        if isinstance(event, Reply):
            sent.append(event.data)
        elif isinstance(event, Answer):
            assert event.id in range(len(asked)), event
        else:
            assert isinstance(event, Call), event
    for event in events:
        if isinstance(event, Call) and event.is_request:
            data = core.respond(event.id, None)
            if data is not None:
                sent.append(data)
    assert not core.in_flight, core.in_flight
    assert len(sent) <= 1, sent
    for data in sent:
        out = msgspec.json.decode(data)
        for message in out if isinstance(out, list) else [out]:
            response_ok(message)


def check_reader(data: bytes) -> None:
    limit = LIMITS[data[0] % len(LIMITS)] if data else 1
    cut = (data[-1] * len(data)) // 256 if data else 0
    reader = LineReader(limit)
    items = reader.feed(data[:cut])
    assert reader.buffered <= limit + 1
    items += reader.feed(data[cut:])
    assert reader.buffered <= limit + 1
    items += reader.eof()
    assert reader.buffered == 0
    for item in items:
        if isinstance(item, OversizedLine):
            assert item.size > limit, (item, limit)
            continue
        assert isinstance(item, bytes) and item and b"\n" not in item, item
        assert len(item) <= limit, (len(item), limit)
        check_core(v2.AGENT_CODEC, item)


def test_one_input(data: bytes) -> None:
    method = METHODS[zlib.crc32(data) % len(METHODS)]
    for codec in CODECS.values():
        check_decode(codec, data, method)
    for codec in CORE_CODECS:
        check_core(codec, data)
    check_reader(data)


def main() -> None:
    global STRICT
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--strict", action="store_true", help="known bugs are crashes too")
    ours, libfuzzer = parser.parse_known_args(sys.argv[1:])
    STRICT = ours.strict
    for arg in libfuzzer:  # make sure the corpus folders exist (libFuzzer won't create them)
        if not arg.startswith("-") and not os.path.isfile(arg):
            Path(arg).mkdir(parents=True, exist_ok=True)
        if arg.startswith("-artifact_prefix="):
            prefix = arg.split("=", 1)[1]
            folder = Path(prefix) if prefix.endswith("/") else Path(prefix).parent
            folder.mkdir(parents=True, exist_ok=True)
    atheris.Setup([sys.argv[0], *libfuzzer], test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
