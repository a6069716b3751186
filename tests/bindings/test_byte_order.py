"""A line written the way peers write it (`jsonrpc`, `id`, `method`, `params` / `jsonrpc`,
`id`, `result` / `jsonrpc`, `id`, `error`) decodes and encodes back to the same bytes, for
every method of every surface: `encode_message` writes `jsonrpc` first."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_schema import ErrorResponse, MessageCodec, MethodSpec, Response, encode_message
from codegen import ir
from codegen.__main__ import load_modules
from helpers.paths import ROOT
from helpers.strategies import IRStrategies

MODULES = {
    m.version + (".unstable" if m.unstable else ""): m for m in load_modules(ROOT / "schema")
}
STRATEGIES = {name: IRStrategies(module) for name, module in MODULES.items()}


def surface(name: str) -> Any:
    return importlib.import_module(f"acp_schema.{name}").SURFACE


def codecs(s: Any, side: str) -> tuple[MessageCodec, MessageCodec]:
    """The codec of the side that handles a method of `side`, and that of the side calling it."""
    if side == "client":
        return s.client_codec, s.agent_codec
    if side == "proxy":
        return s.message_codec, s.message_codec
    return s.agent_codec, s.client_codec


def _cases() -> Iterator[Any]:
    for name, module in MODULES.items():
        s = surface(name)
        tables = {"agent": s.agent_methods, "client": s.client_methods}
        tables |= {"protocol": s.protocol_methods, "proxy": s.proxy_methods}
        for method in module.methods:
            spec = tables[method.side][method.name]
            yield pytest.param(name, method, spec, id=f"{name}:{method.side}:{method.name}")


def canonical(codec: Any, value: Any) -> bytes:
    """`value` (parsed JSON) as this side encodes it: the field order of the generated types."""
    return encode_message(codec.convert(value))


@pytest.mark.parametrize(("name", "method", "spec"), list(_cases()))
def test_a_peers_line_decodes_and_encodes_to_the_same_bytes(
    name: str, method: ir.Method, spec: MethodSpec[Any, Any]
) -> None:
    handles, calls = codecs(surface(name), method.side)
    if method.side == "proxy" and spec.name not in handles.inbound:
        handles = calls = MessageCodec(
            {spec.name: spec}, {spec.name: spec}, surface(name).error_codec
        )
    strategies = STRATEGIES[name]

    @settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        strategies.definition(method.params or ""),
        strategies.definition(method.result) if method.result else st.none(),
        st.one_of(st.integers(0, 2**31), st.text("abc-", min_size=1)),
    )
    def check(params: Any, result: Any, request_id: int | str) -> None:
        body = b'"method":' + msgspec.json.encode(spec.name) + b',"params":'
        body += canonical(spec.params, params) + b"}"
        if spec.kind == "notification":
            line = b'{"jsonrpc":"2.0",' + body
        else:
            line = b'{"jsonrpc":"2.0","id":' + msgspec.json.encode(request_id) + b"," + body
        message = handles.decode(line)
        assert type(message) is spec.message
        assert encode_message(message) == line
        if spec.result is None:
            return
        answer = b'{"jsonrpc":"2.0","id":' + msgspec.json.encode(request_id) + b',"result":'
        answer += canonical(spec.result, result) + b"}"
        response = calls.decode(answer, lambda _id: spec.name)
        assert type(response) is Response and type(response.result) is not msgspec.Raw
        assert encode_message(response) == answer

    check()


@pytest.mark.parametrize("name", list(MODULES))
def test_an_error_response_encodes_to_the_same_bytes(name: str) -> None:
    line = b'{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}'
    message = surface(name).client_codec.decode(line, lambda _id: None)
    assert type(message) is ErrorResponse
    assert encode_message(message) == line


def test_the_readme_line_comes_back_byte_for_byte() -> None:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("line = b'") + len("line = b'")
    line = readme[start : readme.index("'\n", start)].encode()
    v2 = importlib.import_module("acp_schema.v2")
    assert v2.encode_message(v2.decode_message(line)) == line
