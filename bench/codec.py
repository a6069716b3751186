"""Codec micro-benchmark: acp_schema vs a hand-written strict msgspec Struct, in one run.

Decodes and encodes one v2 `session/update` agent_message_chunk line; repetitions are
interleaved so both sides see the same machine state. Reports medians, spread and ratios.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from acp_schema import v2

LINE = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_abc123",'
    b'"update":{"sessionUpdate":"agent_message_chunk","messageId":"msg_7f3a",'
    b'"content":{"type":"text","text":"Looking at the failing test \xe2\x80\x94 the fixture '
    b'path is wrong, fixing it now."}}}}'
)


# The best a msgspec binding can do: exactly these shapes, nothing open, nothing lenient.
class RefText(msgspec.Struct, tag_field="type", tag="text", kw_only=True):
    text: str
    annotations: dict[str, Any] | msgspec.UnsetType | None = msgspec.UNSET
    meta: dict[str, Any] | msgspec.UnsetType | None = msgspec.field(
        default=msgspec.UNSET, name="_meta"
    )


class RefChunk(msgspec.Struct, tag_field="sessionUpdate", tag="agent_message_chunk", kw_only=True):
    message_id: str = msgspec.field(name="messageId")
    content: RefText
    meta: dict[str, Any] | msgspec.UnsetType | None = msgspec.field(
        default=msgspec.UNSET, name="_meta"
    )


class RefParams(msgspec.Struct, kw_only=True):
    session_id: str = msgspec.field(name="sessionId")
    update: RefChunk
    meta: dict[str, Any] | msgspec.UnsetType | None = msgspec.field(
        default=msgspec.UNSET, name="_meta"
    )


class RefNotification(msgspec.Struct, kw_only=True):
    jsonrpc: Literal["2.0"]
    method: str
    params: RefParams


def measure(fn: Callable[[], object], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number * 1e6


def main() -> None:
    number = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    ref_decoder = msgspec.json.Decoder(RefNotification)
    encoder = msgspec.json.Encoder()
    ours = v2.decode_message(LINE)
    ref = ref_decoder.decode(LINE)
    cases: dict[str, Callable[[], object]] = {
        "decode acp_schema.v2.decode_message": lambda: v2.decode_message(LINE),
        "decode msgspec reference Struct": lambda: ref_decoder.decode(LINE),
        "decode msgspec untyped (dict)": lambda: msgspec.json.decode(LINE),
        "encode acp_schema message": lambda: v2.encode_message(ours),
        "encode msgspec reference Struct": lambda: encoder.encode(ref),
    }
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(15):
        for name, fn in cases.items():
            samples[name].append(measure(fn, number))
    median = {name: statistics.median(values) for name, values in samples.items()}
    print(f"{'case':40} {'median us':>10} {'spread':>8} {'vs reference':>13}")
    for name, values in samples.items():
        kind = name.split()[0]
        ref_name = f"{kind} msgspec reference Struct"
        ratio = median[name] / median[ref_name]
        spread = (max(values) - min(values)) / median[name] * 100
        print(f"{name:40} {median[name]:10.3f} {spread:7.1f}% {ratio:12.2f}x")


if __name__ == "__main__":
    main()
