"""`acp_schema.Surface`: each surface module's `SURFACE` describes exactly that module (bases,
peers, codecs, method tables, `session/update` variants by wire tag); `surface_of` says which
surface a generated value or class belongs to (None for anything else); `surface(version)`
imports only the surface asked for; importing one surface imports no other one."""

from __future__ import annotations

import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

import acp_schema
import acp_schema.v1 as v1
import acp_schema.v1.unstable as v1u
import acp_schema.v2 as v2
import acp_schema.v2.unstable as v2u
from acp_schema import OpenVariant, Request, Surface, surface, surface_of, tag_of
from helpers.processes import bindings_only
from helpers.typecheck import mypy_strict_errors

SURFACES = [v1, v1u, v2, v2u]


def ids(module: ModuleType) -> str:
    return module.__name__.removeprefix("acp_schema.")


@pytest.mark.parametrize("module", SURFACES, ids=ids)
def test_the_surface_describes_its_own_module(module: Any) -> None:
    s: Surface[Any, Any, Any, Any] = module.SURFACE
    assert s.name == module.__name__ and s.module is module and s.label == ids(module)
    assert s.protocol_version == module.PROTOCOL_VERSION
    assert s.unstable == module.__name__.endswith(".unstable")
    assert (s.agent_base, s.client_base) == (module.AgentBase, module.ClientBase)
    assert (s.agent_peer, s.client_peer) == (module.AgentPeer, module.ClientPeer)
    assert s.agent_codec is module.AGENT_CODEC and s.client_codec is module.CLIENT_CODEC
    assert s.message_codec is module.MESSAGE_CODEC and s.error_codec is module.ERROR_CODEC
    assert s.agent_methods is module.AGENT_METHODS
    assert s.client_methods is module.CLIENT_METHODS
    assert s.protocol_methods is module.PROTOCOL_METHODS
    assert s.proxy_methods == getattr(module, "PROXY_METHODS", {})
    assert bool(s.proxy_methods) == s.unstable  # proxy methods are drafts
    assert s.methods is module.METHODS
    assert s.initialize is module.INITIALIZE and s.session_update is module.SESSION_UPDATE
    assert s.session_update_union is module.SessionUpdate
    assert (s.base("agent"), s.base("client")) == (s.agent_base, s.client_base)
    assert (s.peer("agent"), s.peer("client")) == (s.agent_peer, s.client_peer)
    assert (s.codec("agent"), s.codec("client")) == (s.agent_codec, s.client_codec)


@pytest.mark.parametrize("module", SURFACES, ids=ids)
def test_the_session_update_variants_are_the_unions_by_wire_tag(module: Any) -> None:
    s = module.SURFACE
    members, info = typing.get_args(module.SessionUpdate)
    assert list(s.session_update_variants.values()) == list(typing.get_args(members))
    for tag, cls in s.session_update_variants.items():
        assert cls.__struct_config__.tag == tag
        assert getattr(module, cls.__name__) is cls
    assert s.unknown_session_update is info.unknown
    assert (s.unknown_session_update is None) == (module in (v1, v1u))  # v1's union is closed
    params = s.session_update.params.type  # the params of `session/update` carry the union
    assert msgspec.structs.fields(params)[1].type is module.SessionUpdate


def test_the_session_cancel_params_come_from_the_method_table() -> None:
    for module in SURFACES:
        spec = module.SURFACE.agent_methods["session/cancel"]
        cancel = spec.params.type(session_id="s1")
        assert surface_of(cancel) is module.SURFACE
        assert module.encode_message(cancel) == b'{"sessionId":"s1"}'


def test_the_unstable_classes_are_told_apart_from_the_stable_ones() -> None:
    chunk = v2u.UserMessageChunk(content=v2u.TextContent(text="hi"), message_id="m")
    assert v2u.UserMessageChunk is not v2.UserMessageChunk
    assert surface_of(chunk) is v2u.SURFACE and surface_of(v2.UserMessageChunk) is v2.SURFACE
    stable = v2.UserMessageChunk(content=v2.TextContent(text="hi"), message_id="m")
    assert tag_of(chunk) == tag_of(stable) == "user_message_chunk"


class MyAgent(v2u.AgentBase):
    pass


class MyClient(v1.ClientBase):
    pass


class ViaSubclass(MyAgent):
    pass


@pytest.mark.parametrize("module", SURFACES, ids=ids)
def test_surface_of_a_value_class_handler_peer_and_message(module: Any) -> None:
    s = module.SURFACE
    update = next(iter(s.session_update_variants.values()))
    line = b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}'
    message = module.AGENT_CODEC.decode(line)
    assert type(message).__module__ == f"{module.__name__}.methods"
    subclass = type("Handler", (module.ClientBase,), {})
    for value in (
        update,
        message,
        type(message),
        module.AgentBase,
        subclass,
        subclass(),
        module.AgentPeer(None),
        module.ClientPeer,
        module.ERROR_CODEC.decode(b'{"code":-32601,"message":"m"}'),
    ):
        assert surface_of(value) is s, value


def test_surface_of_user_subclasses() -> None:
    assert surface_of(MyAgent) is v2u.SURFACE and surface_of(MyAgent()) is v2u.SURFACE
    assert surface_of(ViaSubclass) is v2u.SURFACE
    assert surface_of(MyClient()) is v1.SURFACE


def test_surface_of_an_unknown_variant() -> None:
    line = b'{"sessionId":"s","update":{"sessionUpdate":"_vendor_thing","x":1}}'
    params = v2.SESSION_UPDATE.params.decode(line)
    assert isinstance(params.update, OpenVariant)
    assert surface_of(params.update) is v2.SURFACE
    assert tag_of(params.update) == "_vendor_thing"


class Foreign(msgspec.Struct):
    x: int = 0


@pytest.mark.parametrize(
    "value",
    [
        None,
        1,
        "user_message_chunk",
        {},
        [],
        object(),
        object,
        Foreign(),
        Foreign,
        v2,
        Request(id=1, method="m"),
        Request,
        acp_schema.MethodMessage,
        v2.SURFACE,
        OpenVariant,
    ],
    ids=repr,
)
def test_surface_of_anything_else_is_none(value: object) -> None:
    assert surface_of(value) is None
    assert tag_of(value) is None


def test_surface_by_version() -> None:
    assert surface(2) is v2.SURFACE and surface(2, unstable=True) is v2u.SURFACE
    assert surface(1) is v1.SURFACE and surface(1, True) is v1u.SURFACE
    with pytest.raises(ValueError, match=r"no protocol surface v3: .* v1, v1.unstable, v2"):
        surface(3)


def run(code: str) -> str:
    return bindings_only(code).stdout.strip()


def test_importing_a_surface_imports_no_other_one() -> None:
    loaded = run(
        """
        import sys
        import acp_schema.v2
        def surfaces():
            return sorted(m for m in sys.modules if m.split(".")[1:2] in (["v1"], ["v2"])
                          and m.split(".")[2:] in ([], ["unstable"]))
        print(surfaces())
        acp_schema.surface_of(acp_schema.v2.UserMessageChunk)
        print(surfaces())
        acp_schema.surface(1, unstable=True)
        print(surfaces())
        """
    )
    assert loaded.splitlines() == [
        "['acp_schema.v2']",
        "['acp_schema.v2']",
        "['acp_schema.v1', 'acp_schema.v1.unstable', 'acp_schema.v2']",
    ]
    assert run("import sys, acp_schema; print(sorted(m for m in sys.modules if '.v' in m))") == "[]"


TYPED = """\
from typing import Any, assert_type

import acp_schema
import acp_schema.v2
import acp_schema.v2.unstable

assert_type(acp_schema.v2.SURFACE.agent_peer, type[acp_schema.v2.AgentPeer])
assert_type(acp_schema.v2.unstable.SURFACE.client_base, type[acp_schema.v2.unstable.ClientBase])
assert_type(acp_schema.surface(2).agent_base, type[acp_schema.v2.AgentBase])
assert_type(acp_schema.surface(2, unstable=True).agent_peer, type[acp_schema.v2.unstable.AgentPeer])
assert_type(acp_schema.surface(7).agent_peer, type[Any])
found = acp_schema.surface_of(object())
assert_type(found, acp_schema.Surface[Any, Any, Any, Any] | None)
peer: acp_schema.v2.AgentPeer = acp_schema.v2.unstable.SURFACE.agent_peer(None)  # wrong peer
"""


def test_surfaces_are_typed_by_their_bases_and_peers(tmp_path: Path) -> None:
    errors = mypy_strict_errors(TYPED, tmp_path)
    assert len(errors) == 2, errors
    assert ":14: error:" in errors[0]  # the unstable peer is not the stable one
    assert ":14: error:" in errors[1] and "Caller" in errors[1]  # None is no Caller
