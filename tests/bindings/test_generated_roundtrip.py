"""Generated test data for every definition of every protocol surface (lsprotocol style).

For each StructDef / UnionDef / EnumDef / AliasDef of the IR, hypothesis draws JSON values
from `helpers.strategies.IRStrategies` and checks that each one

1. is valid under the vendored JSON Schema (so the strategies really follow the schema),
2. decodes with the generated acp_schema type, and
3. re-encodes to the same JSON (omitted stays omitted, null stays null).

`HYPOTHESIS_EXAMPLES` sets the examples per definition (default 25). The number of
examples run is reported at the end of the module and kept in the pytest cache under
`acpwire/hypothesis_examples`.
"""

from __future__ import annotations

import importlib
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import jsonschema
import msgspec
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis.errors import NoSuchExample

from acp_schema import UNSET, Codec, OpenVariant
from codegen import ir
from codegen.__main__ import load_modules
from codegen.classify import type_refs
from helpers.paths import ROOT
from helpers.reporting import json_diff, write_summary
from helpers.strategies import OMIT, IRStrategies

MAX_EXAMPLES = int(os.environ.get("HYPOTHESIS_EXAMPLES", "25"))

# Union members the strategies leave out because a known generator bug breaks their round
# trip; each needs a strict xfail regression test. Empty: none are known.
KNOWN_BUG_MEMBERS: dict[str, dict[str, frozenset[str]]] = {}


@dataclass
class Surface:
    """One generated module (e.g. `acp_schema.v2.unstable`) with its IR and schema."""

    name: str  # "v2.unstable"
    module: ir.Module
    py: ModuleType
    schema: dict[str, Any]
    strategies: IRStrategies = field(init=False)
    defs: dict[str, ir.Definition] = field(init=False)
    _validators: dict[str, jsonschema.Draft202012Validator] = field(
        init=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        self.strategies = IRStrategies(self.module, KNOWN_BUG_MEMBERS.get(self.name))
        self.defs = self.module.by_name()

    def pointer(self, name: str) -> str:
        """Where a definition's schema lives: its `$def`, or the union member it came from."""
        d = self.defs[name]
        source = d.source if isinstance(d, ir.StructDef) else ""
        return source or f"#/$defs/{name}"

    def validator(self, name: str) -> jsonschema.Draft202012Validator:
        if name not in self._validators:
            root = {
                "$schema": self.schema["$schema"],
                "$defs": self.schema["$defs"],
                "$ref": self.pointer(name),
            }
            self._validators[name] = jsonschema.Draft202012Validator(root)
        return self._validators[name]

    def codec(self, name: str) -> Codec[Any]:
        return Codec(getattr(self.py, name))


def _surfaces() -> dict[str, Surface]:
    out = {}
    for module in load_modules(ROOT / "schema"):
        name = module.version + (".unstable" if module.unstable else "")
        filename = "schema.unstable.json" if module.unstable else "schema.json"
        schema = json.loads((ROOT / "schema" / module.version / filename).read_text())
        out[name] = Surface(name, module, importlib.import_module(f"acp_schema.{name}"), schema)
    return out


SURFACES = _surfaces()
EXAMPLES: Counter[str] = Counter()  # hypothesis examples run, per surface


def _cases() -> Iterator[Any]:
    for surface in SURFACES.values():
        for d in surface.module.definitions:
            yield pytest.param(surface.name, d.name, id=f"{surface.name}:{d.name}")


@pytest.fixture(scope="module", autouse=True)
def report_examples(request: pytest.FixtureRequest) -> Iterator[None]:
    started = time.perf_counter()
    yield
    elapsed = time.perf_counter() - started
    total = sum(EXAMPLES.values())
    per_surface = ", ".join(f"{name} {n}" for name, n in sorted(EXAMPLES.items()))
    line = f"hypothesis examples run: {total} ({per_surface}) in {elapsed:.1f}s"
    cache = getattr(request.config, "cache", None)
    if cache is not None:
        cache.set("acpwire/hypothesis_examples", {"total": total, **EXAMPLES})
    request.config.add_cleanup(lambda: write_summary(request.config, line))


def check_schema(surface: Surface, name: str, value: Any) -> None:
    error = jsonschema.exceptions.best_match(surface.validator(name).iter_errors(value))
    if error is not None:
        path = "/" + "/".join(map(str, error.absolute_path))
        pytest.fail(f"strategy drew a schema-invalid {name} at {path}: {error.message}\n{value!r}")


def check_roundtrip(surface: Surface, name: str, value: Any) -> Any:
    codec = surface.codec(name)
    decoded = codec.decode(msgspec.json.encode(value))
    diff = json_diff(json.loads(codec.encode(decoded)), value)
    assert diff is None, (
        f"{name} did not round-trip: {diff}\ninput: {value!r}\ndecoded: {decoded!r}"
    )
    return decoded


def check_variant_class(surface: Surface, name: str, value: Any, decoded: Any) -> None:
    """A tagged union decodes to the variant class for the tag, or to its Unknown class."""
    d = surface.defs[name]
    if not isinstance(d, ir.UnionDef) or d.tag_field is None or not isinstance(value, dict):
        return
    tag = value.get(d.tag_field)
    by_tag = {surface.defs[v].tag_value: v for v in d.variants}  # type: ignore[union-attr]
    if tag in by_tag:
        assert type(decoded) is getattr(surface.py, by_tag[tag]), (tag, decoded)
    elif d.unknown is not None and isinstance(tag, str) and tag.startswith("_vendor_"):
        assert type(decoded) is getattr(surface.py, d.unknown.name), (tag, decoded)
        assert isinstance(decoded, OpenVariant) and decoded.tag == tag


@pytest.mark.parametrize(("surface_name", "name"), list(_cases()))
def test_definition_roundtrip(surface_name: str, name: str) -> None:
    surface = SURFACES[surface_name]

    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(surface.strategies.definition(name))
    def roundtrip(value: Any) -> None:
        EXAMPLES[surface_name] += 1
        check_schema(surface, name, value)
        decoded = check_roundtrip(surface, name, value)
        check_variant_class(surface, name, value, decoded)

    roundtrip()


# ---------------------------------------------------------------------- three-state fields


def _three_state_cases() -> Iterator[Any]:
    for surface in SURFACES.values():
        for s in surface.module.structs:
            for f in s.fields:
                if f.three_state:
                    yield pytest.param(
                        surface.name, s.name, f, id=f"{surface.name}:{s.name}.{f.wire}"
                    )


STATES = {
    "omitted": (lambda obj, wire: wire not in obj, lambda attr: attr is UNSET),
    "null": (lambda obj, wire: obj.get(wire, OMIT) is None, lambda attr: attr is None),
    "value": (lambda obj, wire: obj.get(wire) is not None, lambda attr: attr not in (None, UNSET)),
}


@pytest.mark.parametrize(("surface_name", "struct", "f"), list(_three_state_cases()))
def test_three_state_fields(surface_name: str, struct: str, f: ir.Field) -> None:
    """The strategies reach all three states of a patch field, and decoding keeps them apart."""
    surface = SURFACES[surface_name]
    strategy = surface.strategies.definition(struct)
    for state, (on_wire, decoded_as) in STATES.items():
        try:
            value = find(
                strategy,
                lambda obj, on_wire=on_wire: on_wire(obj, f.wire),
                settings=settings(database=None, max_examples=500),
            )
        except NoSuchExample:
            pytest.fail(f"strategy never leaves {struct}.{f.wire} {state}")
        EXAMPLES[surface_name] += 1
        decoded = check_roundtrip(surface, struct, value)
        assert decoded_as(getattr(decoded, f.attr)), (state, decoded)


# ---------------------------------------------------------------------- generator regressions
#
# Minimal repros of generator bugs the generated data and the docs examples found, kept as
# regression tests (fixed in 453743f; the lone-tagged-variant ones by tag_guard).


def _py(surface_name: str) -> ModuleType:
    return SURFACES[surface_name].py


def _references(d: ir.Definition) -> set[str]:
    types: tuple[ir.TypeRef, ...] = ()
    if isinstance(d, ir.StructDef):
        types = tuple(f.type for f in d.fields)
    elif isinstance(d, ir.UnionDef):
        types = d.members
    elif isinstance(d, ir.AliasDef):
        types = (d.target,)
    return {name for t in types for name in type_refs(t)}


@pytest.mark.parametrize("surface_name", ["v1", "v1.unstable"])
def test_lone_tagged_variant_keeps_the_untagged_default(surface_name: str) -> None:
    py = _py(surface_name)
    decoded = Codec(py.AuthMethod).decode(b'{"id":"agent-login","name":"Agent login"}')
    assert type(decoded) is py.AuthMethodAgent


CODEX_ENV_VAR_AUTH = (
    b'{"id":"openai-api-key","name":"Use OPENAI_API_KEY","description":"...",'
    b'"type":"env_var","vars":[{"name":"OPENAI_API_KEY"}]}'
)


@pytest.mark.parametrize("surface_name", ["v1", "v1.unstable"])
def test_present_unknown_tag_is_not_the_default_variant(surface_name: str) -> None:
    """codex-acp's `env_var` auth method in a v1 initialize response: kept whole, not `agent`."""
    py = _py(surface_name)
    line = (
        b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"authMethods":['
        + CODEX_ENV_VAR_AUTH
        + b"]}}"
    )
    response = py.CLIENT_CODEC.decode(line, lambda _id: "initialize")
    (method,) = response.result.auth_methods
    assert type(method) is py.UnknownAuthMethod
    assert method.tag == "env_var"
    assert msgspec.json.encode(response) == line


# Every tagged union with a default variant: the default decodes without the tag (and, where
# the schema has no catch-all branch, with its own name as the tag, which v2 gives it), a
# present unknown tag gives the open variant. (v1's SetSessionConfigOptionRequest is the
# exception its schema names: unknown `type` values with string payloads decode as `value_id`.)
DEFAULT_VARIANT_UNIONS = [
    ("AuthMethod", "AuthMethodAgent", "agent", {"id": "a", "name": "A"}),
    (
        "McpServer",
        "McpServerStdio",
        "stdio",
        {"name": "fs", "command": "mcp-fs", "args": [], "env": []},
    ),
    (
        "MultiSelectItems",
        "TitledMultiSelectItems",
        None,  # "titled items omit `type`": an explicit `titled` is the catch-all's
        {"anyOf": [{"const": "a", "title": "A"}]},
    ),
]


@pytest.mark.parametrize("surface_name", ["v1", "v1.unstable", "v2", "v2.unstable"])
def test_every_default_variant_union_keeps_unknown_tags(surface_name: str) -> None:
    surface = SURFACES[surface_name]
    with_default = {u.name for u in surface.module.unions if u.tag_field and u.untagged}
    checked = {name for name, _, _, _ in DEFAULT_VARIANT_UNIONS} & with_default
    assert with_default - checked <= {"SetSessionConfigOptionRequest"}
    for union, default, own_tag, payload in DEFAULT_VARIANT_UNIONS:
        if union not in checked:
            continue
        codec = Codec(getattr(surface.py, union))
        assert type(codec.decode(msgspec.json.encode(payload))).__name__ == default
        if own_tag is not None:
            tagged = codec.decode(msgspec.json.encode({**payload, "type": own_tag}))
            assert type(tagged).__name__ == default
        raw = msgspec.json.encode({**payload, "type": "future_kind", "extra": [1]})
        decoded = codec.decode(raw)
        assert isinstance(decoded, OpenVariant), (union, decoded)
        assert codec.encode(decoded) == raw


@pytest.mark.parametrize("surface_name", ["v1", "v1.unstable"])
def test_set_config_option_unknown_type_is_value_id_as_its_schema_says(surface_name: str) -> None:
    py = _py(surface_name)
    raw = b'{"sessionId":"s","configId":"c","type":"future_kind","value":"v"}'
    decoded = Codec(py.SetSessionConfigOptionRequest).decode(raw)
    assert type(decoded) is py.ValueIdSetSessionConfigOptionRequest


@pytest.mark.parametrize(
    ("surface_name", "type_name", "raw"),
    [
        # schema-invalid: `type` is required by the text variant and by the catch-all branch
        ("v2", "AvailableCommandInput", b'{"hint":"file name"}'),
        ("v2.unstable", "AvailableCommandInput", b'{"hint":"file name"}'),
        ("v2", "ReplayFrom", b"{}"),
    ],
)
def test_lone_tagged_variant_requires_its_tag(
    surface_name: str, type_name: str, raw: bytes
) -> None:
    with pytest.raises(msgspec.ValidationError):
        Codec(getattr(_py(surface_name), type_name)).decode(raw)


BLOB_CHUNK = (
    b'{"sessionUpdate":"agent_message_chunk","content":{"type":"resource",'
    b'"resource":{"uri":"file:///a.png","blob":"AA=="}}}'
)


@pytest.mark.parametrize("surface_name", ["v1", "v1.unstable"])
def test_closed_union_fallback_keeps_the_variant(surface_name: str) -> None:
    """A blob resource needs the fallback path; a closed union's fallback must honour the tag."""
    py = _py(surface_name)
    codec = Codec(py.SessionUpdate)
    decoded = codec.decode(BLOB_CHUNK)
    assert type(decoded) is py.AgentMessageChunk, decoded
    assert json.loads(codec.encode(decoded)) == json.loads(BLOB_CHUNK)


@pytest.mark.parametrize("surface_name", ["v1", "v1.unstable"])
def test_closed_union_rejects_unknown_tags(surface_name: str) -> None:
    """v1's SessionUpdate has no catch-all branch (this once became a SessionInfoUpdate)."""
    with pytest.raises(msgspec.ValidationError, match="sessionUpdate"):
        Codec(_py(surface_name).SessionUpdate).decode(b'{"sessionUpdate":"no_such_update"}')


@pytest.mark.parametrize("surface_name", ["v2", "v2.unstable"])
def test_min_length_list_items_reach_the_fallback(surface_name: str) -> None:
    """`prompt` is Annotated[list[ContentBlock], Meta(min_length=1)]; its items may need the fallback."""
    raw = b'{"sessionId":"s","prompt":[{"type":"resource","resource":{"uri":"file:///a","blob":"AA=="}}]}'
    decoded = Codec(_py(surface_name).PromptRequest).decode(raw)
    assert json.loads(msgspec.json.encode(decoded)) == json.loads(raw)
    with pytest.raises(msgspec.ValidationError, match="length >= 1"):
        Codec(_py(surface_name).PromptRequest).decode(b'{"sessionId":"s","prompt":[]}')


@pytest.mark.parametrize(
    ("surface_name", "type_name", "raw"),
    [
        ("v2", "SessionUpdate", b'{"sessionUpdate":"state_update","state":"idle","stopReason":5}'),
        ("v2.unstable", "IdleStateUpdate", b'{"state":"idle","stopReason":5}'),
        ("v1.unstable", "IdleStateUpdate", b'{"state":"idle","stopReason":5}'),
    ],
)
def test_merged_discriminator_keeps_its_leniency(
    surface_name: str, type_name: str, raw: bytes
) -> None:
    """IdleStateUpdate.stopReason is x-deserialize-default-on-error, also once merged."""
    decoded = Codec(getattr(_py(surface_name), type_name)).decode(raw)
    assert decoded.stop_reason is UNSET


@pytest.mark.parametrize("surface_name", ["v2", "v2.unstable"])
def test_merged_one_of_is_exclusive(surface_name: str) -> None:
    """v2 scopes an elicitation with oneOf: session or request, not both."""
    raw = (
        b'{"mode":"url","message":"m","elicitationId":"e","url":"https://example.com",'
        b'"sessionId":"s","requestId":1}'
    )
    with pytest.raises(msgspec.ValidationError, match="exactly one"):
        Codec(_py(surface_name).CreateElicitationRequest).decode(raw)


@pytest.mark.parametrize("surface_name", list(SURFACES))
def test_no_orphan_definitions(surface_name: str) -> None:
    """Every emitted definition is a schema $def, or used by another definition or a method.

    (v2 once kept the variant structs of a dropped nested union, e.g. `None_IdleStateUpdate`,
    whose `{"type": "null"}` property had become `Any`.)
    """
    surface = SURFACES[surface_name]
    used = {n for d in surface.module.definitions for n in _references(d)}
    used |= {n for m in surface.module.methods for n in (m.params, m.result) if n}
    orphans = [
        d.name
        for d in surface.module.definitions
        if d.name not in used and d.name not in surface.schema["$defs"]
    ]
    assert orphans == []
