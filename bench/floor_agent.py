"""The raw-pipe floor of the agent benchmarks: the least a Python agent on msgspec does.

    python bench/floor_agent.py

It reads its stdin in chunks, splits lines, decodes each with one small msgspec Struct (id and
method), and writes a canned answer per request in one `os.write` per chunk: `initialize`
gets `{"protocolVersion": 2}`, every other request `{"sessionId": "floor"}`. No event loop,
no validation beyond the decode: what is left of an agent's work per request is the two
system calls and the decode/encode of one line.
"""

from __future__ import annotations

import os

import msgspec


class _Line(msgspec.Struct):
    id: int | str | None = None
    method: str = ""


_DECODE = msgspec.json.Decoder(_Line).decode
_ENCODE = msgspec.json.Encoder().encode
INITIALIZED = b'{"protocolVersion":2}'
ANSWER = b'{"sessionId":"floor"}'


def main() -> None:
    pending = b""
    while True:
        data = os.read(0, 65536)
        if not data:
            return
        *lines, pending = (pending + data).split(b"\n")
        answers = []
        for line in lines:
            message = _DECODE(line)
            result = INITIALIZED if message.method == "initialize" else ANSWER
            answers.append(
                b'{"jsonrpc":"2.0","id":%s,"result":%s}\n' % (_ENCODE(message.id), result)
            )
        if answers:
            os.write(1, b"".join(answers))


if __name__ == "__main__":
    main()
