"""The ACP documentation examples (shared conformance set) against the generated bindings.

Data: `tests/data/conformance/docs-examples.jsonl` (or `$ACP_CONFORMANCE`, the folder or the
file); without it the module fails to load, and fewer examples than `MIN_EXAMPLES` fail the
run. Its README describes the fields; validity is per schema (`valid.npm` for `schema.json`, so
`acp_schema.vN`; `valid_unstable.npm` for `schema.unstable.json`, so `acp_schema.vN.unstable`).

Every example is checked on both surfaces of its version:

- valid: it decodes to the generated types (requests and notifications with
  `decode_message`, responses with `result_method` naming the method, errors as
  `ErrorResponse`, fragments with `Codec(<def>)`), every decoded value has its annotated
  generated type, and it re-encodes to the same JSON minus `undeclared_keys.npm` (undeclared
  names are dropped by design);
- invalid: decoding raises `msgspec.ValidationError` naming a JSON path, or the method is
  not in this schema (it stays untyped `msgspec.Raw`; answering "method not found" is the
  dispatcher's job), or a documented lenient rule accepts it: those are listed in
  `ACCEPTED_BY_LENIENCY` with the JSON pointer the rule dropped.

Fragments that no schema type matched (`def` is null) are not decoded: there is no type to
check them against. They are counted and asserted (`FRAGMENTS_WITHOUT_DEF`), not skipped.

The per-surface counts are printed at the end of the run and kept in the pytest cache
under `acpwire/conformance`.
"""

from __future__ import annotations

import copy
import importlib
import json
import re
import types
import typing
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import msgspec
import pytest

from acp_schema import UNSET, Codec, ErrorResponse, Notification, Request, Response, UnsetType
from acp_schema._runtime.schema import UnionInfo, variants_by_tag
from fuzz.seeds import docs_examples_file
from helpers.reporting import json_diff, write_summary

SURFACES = ("v1", "v1.unstable", "v2", "v2.unstable")


EXAMPLES: dict[str, dict[str, Any]] = {
    row["id"]: row for row in map(json.loads, docs_examples_file().read_text().splitlines()) if row
}
# The set has 327 examples (README): fewer means lost data, and the checks below would pass
# on what is left.
MIN_EXAMPLES = 327
# Fragments no schema type matched: nothing to decode them as. All are invalid under both
# schemas (RFD proposals), so no accepted value goes unchecked.
FRAGMENTS_WITHOUT_DEF = 9


@dataclass(frozen=True)
class Lenient:
    """An invalid example a lenient rule accepts: decoding drops `pointer` (and nothing else)."""

    pointer: str
    rule: str


# Invalid examples the bindings accept through a documented `x-deserialize-*` rule, by
# (example id, surface). test_accepted_by_leniency_is_complete keeps this list exact.
ACCEPTED_BY_LENIENCY: dict[tuple[str, str], Lenient] = {
    # `"type": "text"` is no ToolCallContent variant (a ContentBlock was meant); ToolCallUpdate's
    # `content` is x-deserialize-skip-invalid-items, so the item is dropped.
    ("v1/session-modes#4", "v1"): Lenient("/params/toolCall/content/0", "skip-invalid-items"),
    ("v1/session-modes#4", "v1.unstable"): Lenient(
        "/params/toolCall/content/0", "skip-invalid-items"
    ),
    # The same message on the draft page.
    ("v1/draft/session-modes#4", "v1"): Lenient("/params/toolCall/content/0", "skip-invalid-items"),
    ("v1/draft/session-modes#4", "v1.unstable"): Lenient(
        "/params/toolCall/content/0", "skip-invalid-items"
    ),
    # The RFD's `"status": true`; the unstable schema wants an AuthStatusCapabilities object.
    # AgentAuthCapabilities.status is x-deserialize-default-on-error, so it reads as omitted.
    ("rfd/get-auth-state#1", "v1.unstable"): Lenient(
        "/result/agentCapabilities/auth/status", "default-on-error"
    ),
}

# Examples a known generator bug breaks (strict xfail: they must start passing once fixed).
KNOWN_BUGS: dict[tuple[str, str], str] = {}

# Outcome per (example id, surface), filled by passing tests, for the summary.
OUTCOMES: dict[tuple[str, str], str] = {}


# ---------------------------------------------------------------------- JSON helpers


def _tokens(pointer: str) -> list[str]:
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def without(value: Any, pointer: str) -> Any:
    """A copy of `value` without the member at JSON pointer `pointer` (if it is there)."""
    out = copy.deepcopy(value)
    *parents, last = _tokens(pointer)
    holder = out
    for token in parents:
        holder = holder[int(token)] if isinstance(holder, list) else holder.get(token, {})
    if isinstance(holder, list):
        del holder[int(last)]
    else:
        holder.pop(last, None)
    return out


_MISSING = object()


def _child(node: Any, token: str) -> Any:
    if isinstance(node, msgspec.Struct):
        attrs = {f.encode_name: f.name for f in msgspec.structs.fields(type(node))}
        value = getattr(node, attrs[token]) if token in attrs else UNSET
        return _MISSING if value is UNSET else value
    if isinstance(node, dict):
        return node.get(token, _MISSING)
    if isinstance(node, list) and token.isdigit() and int(token) < len(node):
        return node[int(token)]
    return _MISSING


def keeps(decoded: Any, pointer: str) -> bool:
    """Whether a decoded value keeps the member at `pointer`: a field of its struct, or raw JSON."""
    *parents, last = _tokens(pointer)
    node = decoded
    for token in parents:
        if isinstance(node, msgspec.Raw):
            return True  # untyped payload, kept byte for byte
        node = _child(node, token)
    if isinstance(node, msgspec.Struct):
        return last in {f.encode_name for f in msgspec.structs.fields(type(node))}
    return isinstance(node, dict | list | msgspec.Raw)


def expected_json(example: dict[str, Any], surface: str, decoded: Any) -> Any:
    """The example minus the keys this surface does not declare (dropped by design) and minus
    what a listed lenient rule drops."""
    expected = example["message"]
    for pointer in example["undeclared_keys"]["npm"]:  # undeclared in the stable schema
        if not keeps(decoded, pointer):
            expected = without(expected, pointer)
    lenient = ACCEPTED_BY_LENIENCY.get((example["id"], surface))
    return without(expected, lenient.pointer) if lenient else expected


# ---------------------------------------------------------------------- typed values


def type_errors(value: Any, tp: Any, path: str = "$") -> Iterator[str]:
    """Where a decoded value is not of its annotated generated type (deep)."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return
    if origin is typing.Annotated:
        inner, *metadata = typing.get_args(tp)
        info = next((m for m in metadata if isinstance(m, UnionInfo)), None)
        if info is None:
            yield from type_errors(value, inner, path)
            return
        members = (inner, *info.alternatives, *([info.unknown] if info.unknown else []))
        yield from _union_errors(value, members, path)
    elif origin in (typing.Union, types.UnionType):
        yield from _union_errors(value, typing.get_args(tp), path)
    elif origin is typing.Literal:
        if value not in typing.get_args(tp):
            yield f"{path}: {value!r} is not one of {typing.get_args(tp)}"
    elif origin is list:
        if not isinstance(value, list):
            yield f"{path}: expected a list, got {type(value).__name__}"
            return
        (item,) = typing.get_args(tp)
        for i, v in enumerate(value):
            yield from type_errors(v, item, f"{path}[{i}]")
    elif origin is dict:
        if not isinstance(value, dict):
            yield f"{path}: expected a dict, got {type(value).__name__}"
            return
        _, item = typing.get_args(tp)
        for k, v in value.items():
            yield from type_errors(v, item, f"{path}.{k}")
    elif tp is UnsetType or tp is None or tp is type(None):
        if value is not (UNSET if tp is UnsetType else None):
            yield f"{path}: expected {tp}, got {value!r}"
    elif isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        if type(value) is not tp:
            yield f"{path}: expected {tp.__name__}, got {type(value).__name__}"
            return
        for f in msgspec.structs.fields(tp):
            yield from type_errors(getattr(value, f.name), f.type, f"{path}.{f.encode_name}")
    elif isinstance(tp, type):
        if not isinstance(value, tp) or (isinstance(value, bool) and tp is not bool):
            yield f"{path}: expected {tp.__name__}, got {type(value).__name__}"


def _union_errors(value: Any, members: tuple[Any, ...], path: str) -> Iterator[str]:
    if any(not list(type_errors(value, m, path)) for m in members):
        return
    yield f"{path}: {type(value).__name__} matches no member of {members}"


def assert_typed(value: Any, tp: Any) -> None:
    errors = list(type_errors(value, tp))
    assert not errors, "decoded value is not of its generated type:\n" + "\n".join(errors)


def variant_class(union: Any, tag: str) -> type[Any] | None:
    """The generated class of a tagged union for one tag (None if it is not a known tag)."""
    if typing.get_origin(union) is typing.Annotated:
        members, *metadata = typing.get_args(union)
        info = next(m for m in metadata if isinstance(m, UnionInfo))
        return variants_by_tag(info, members).get(tag, info.unknown)
    for member in typing.get_args(union):
        if isinstance(member, type) and issubclass(member, msgspec.Struct):
            if member.__struct_config__.tag == tag:
                return member
    return None


# ---------------------------------------------------------------------- decoding one example


@dataclass
class Decoded:
    value: Any
    encoded: Any  # the re-encoded JSON, parsed
    outcome: str


def _surface(name: str) -> ModuleType:
    return importlib.import_module(f"acp_schema.{name}")


def decode_message(example: dict[str, Any], py: ModuleType) -> Decoded:
    message = example["message"]
    method = example["method"]
    kind = example["kind"]
    decoded = py.decode_message(json.dumps(message), result_method=lambda _id: method)
    spec = py.METHODS.get(method)
    if kind in ("request", "notification"):
        if spec is not None:  # known methods decode to their own message class
            assert type(decoded) is spec.message
            assert (decoded.id is UNSET) == (kind == "notification")
        else:
            assert type(decoded) is (Request if kind == "request" else Notification)
        payload, typed = decoded.params, spec.params.type if spec else None
    elif kind == "response":
        assert type(decoded) is Response
        payload, typed = decoded.result, spec.result.type if spec and spec.result else None
    else:
        assert type(decoded) is ErrorResponse
        payload, typed = decoded.error, py.Error
    outcome = "typed"
    if typed is not None:
        assert_typed(payload, typed)
        if method == "session/update":
            tag = message["params"]["update"]["sessionUpdate"]
            update_type = next(f.type for f in msgspec.structs.fields(typed) if f.name == "update")
            assert type(payload.update) is variant_class(update_type, tag)
    else:
        assert isinstance(payload, msgspec.Raw | UnsetType), payload
        outcome = "extension" if method.startswith("_") else "unknown method"
    return Decoded(decoded, json.loads(py.encode_message(decoded)), outcome)


def fragment_type(example: dict[str, Any], py: ModuleType) -> Any:
    for name in [example["def"], *(example["def_alternatives"] or [])]:
        if name is None:
            continue
        item = name.removesuffix("[]")
        if hasattr(py, item):
            return list[getattr(py, item)] if name.endswith("[]") else getattr(py, item)
    raise AssertionError(f"no generated type for def {example['def']!r} or its alternatives")


def decode_fragment(example: dict[str, Any], py: ModuleType) -> Decoded:
    tp = fragment_type(example, py)
    if example["def_match"] == "partial":
        return decode_fields(tp, example["message"])
    codec = Codec(tp)
    value = codec.decode(json.dumps(example["message"]))
    assert_typed(value, tp)
    encoded = json.loads(codec.encode(value))
    tag_field = getattr(getattr(tp, "__struct_config__", None), "tag_field", None)
    if tag_field is not None and tag_field not in example["message"]:
        # The def's name went to the tagged union variant that absorbed it: encoding adds the tag.
        assert encoded.pop(tag_field) == tp.__struct_config__.tag
        return Decoded(value, encoded, "absorbed variant")
    return Decoded(value, encoded, "typed")


def decode_fields(tp: Any, fragment: dict[str, Any]) -> Decoded:
    """A partial fragment (some fields of a struct): decode each field with its own type."""
    if not (isinstance(tp, type) and issubclass(tp, msgspec.Struct)):
        raise AssertionError(f"partial fragment of {tp!r}, which is no struct")
    fields = {f.encode_name: f for f in msgspec.structs.fields(tp)}
    tag_field = tp.__struct_config__.tag_field
    encoded, values = {}, {}
    for key, raw in fragment.items():
        if key == tag_field:
            assert raw == tp.__struct_config__.tag
            encoded[key] = raw
            continue
        if key not in fields:
            continue  # undeclared: dropped by design, like a full decode would
        field_type = fields[key].type
        if typing.get_origin(field_type) in (typing.Union, types.UnionType):  # drop `| UnsetType`
            members = tuple(m for m in typing.get_args(field_type) if m is not UnsetType)
            field_type = typing.Union[members] if len(members) > 1 else members[0]  # noqa: UP007
        codec = Codec(field_type)
        values[key] = codec.decode(json.dumps(raw))
        assert_typed(values[key], field_type)
        encoded[key] = json.loads(codec.encode(values[key]))
    return Decoded(values, encoded, "partial fragment")


def decode_example(example: dict[str, Any], surface: str) -> Decoded:
    py = _surface(surface)
    if example["kind"] == "fragment":
        return decode_fragment(example, py)
    return decode_message(example, py)


def is_valid(example: dict[str, Any], surface: str) -> bool:
    key = "valid_unstable" if surface.endswith(".unstable") else "valid"
    return bool(example[key]["npm"])


# ---------------------------------------------------------------------- the tests


def without_def(example: dict[str, Any]) -> bool:
    return example["kind"] == "fragment" and example["def"] is None


def _cases() -> Iterator[Any]:
    for example in EXAMPLES.values():
        if without_def(example):
            continue
        for surface in SURFACES:
            if not surface.startswith(example["version"]):
                continue
            key = (example["id"], surface)
            marks = (
                [pytest.mark.xfail(reason=KNOWN_BUGS[key], strict=True)]
                if key in KNOWN_BUGS
                else []
            )
            yield pytest.param(example["id"], surface, id=f"{example['id']}@{surface}", marks=marks)


CASES = list(_cases())


def summary_line(surface: str) -> str:
    keys = [(c.values[0], surface) for c in CASES if c.values[1] == surface]
    states = {
        key: OUTCOMES.get(key, "xfail: generator bug" if key in KNOWN_BUGS else "failed")
        for key in keys
    }
    count = Counter(state.split(":")[0].split(" (")[0] for state in states.values())
    valid = [k for k in keys if is_valid(EXAMPLES[k[0]], surface)]
    return (
        f"  {surface:<12} {count['valid'] + count['invalid']}/{len(keys)} passed: "
        f"valid {count['valid']}/{len(valid)} round-trip, "
        f"invalid {count['invalid']}/{len(keys) - len(valid)} rejected or accounted for; "
        f"{count['xfail']} xfail, {count['failed']} failed\n"
        f"  {'':<12} "
        + ", ".join(f"{state} {n}" for state, n in sorted(Counter(states.values()).items()))
    )


@pytest.fixture(scope="module", autouse=True)
def report_counts(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if not OUTCOMES:
        return
    lines = ["conformance (docs-examples.jsonl against the npm schemas):"]
    lines += [summary_line(surface) for surface in SURFACES]
    lines.append(f"  ACCEPTED_BY_LENIENCY: {len(ACCEPTED_BY_LENIENCY)} entries")
    lines.append(f"  fragments without a def (nothing to decode as): {FRAGMENTS_WITHOUT_DEF}")
    cache = getattr(request.config, "cache", None)
    if cache is not None:
        cache.set("acpwire/conformance", {f"{i}@{s}": o for (i, s), o in OUTCOMES.items()})
    request.config.add_cleanup(lambda: write_summary(request.config, "\n".join(lines)))


@pytest.mark.parametrize(("example_id", "surface"), CASES)
def test_example(example_id: str, surface: str) -> None:
    example = EXAMPLES[example_id]
    key = (example_id, surface)
    if is_valid(example, surface):
        decoded = decode_example(example, surface)
        assert decoded.outcome != "unknown method", f"{example['method']} is not in METHODS"
        diff = json_diff(decoded.encoded, expected_json(example, surface, decoded.value))
        assert diff is None, f"re-encoded JSON differs: {diff}\ndecoded: {decoded.value!r}"
        outcome = f"valid: {decoded.outcome}"
    else:
        outcome = f"invalid: {check_invalid(example, surface)}"
    OUTCOMES[key] = outcome


def test_all_examples_are_there() -> None:
    assert len(EXAMPLES) >= MIN_EXAMPLES, f"{len(EXAMPLES)} examples, the set has {MIN_EXAMPLES}"
    checked = len(EXAMPLES) - FRAGMENTS_WITHOUT_DEF
    assert len({case.values[0] for case in CASES}) == checked


def test_fragments_without_def_are_accounted_for() -> None:
    """Each is invalid under both schemas (no def matched it), so no checked value is missed."""
    unmatched = [e for e in EXAMPLES.values() if without_def(e)]
    assert len(unmatched) == FRAGMENTS_WITHOUT_DEF, [e["id"] for e in unmatched]
    for example in unmatched:
        assert not example["def_alternatives"], example["id"]
        assert not example["valid"]["npm"] and not example["valid_unstable"]["npm"], example["id"]


def check_invalid(example: dict[str, Any], surface: str) -> str:
    key = (example["id"], surface)
    try:
        decoded = decode_example(example, surface)
    except msgspec.ValidationError as exc:
        assert "at `$" in str(exc), f"error names no JSON path: {exc}"
        assert key not in ACCEPTED_BY_LENIENCY, f"listed as accepted but rejected: {exc}"
        schema_error = (
            example["errors_unstable"] if surface.endswith(".unstable") else example["errors"]
        )["npm"]
        assert_same_place(str(exc), schema_error)
        return "rejected"
    if decoded.outcome == "unknown method":
        return "unknown method"
    assert key in ACCEPTED_BY_LENIENCY, (
        f"invalid example accepted ({(example['errors_unstable'] if surface.endswith('.unstable') else example['errors'])['npm']})"
        f"\ndecoded: {decoded.value!r}"
    )
    diff = json_diff(decoded.encoded, expected_json(example, surface, decoded.value))
    assert diff is None, (
        f"the lenient rule changed more than {ACCEPTED_BY_LENIENCY[key].pointer}: {diff}"
    )
    return f"accepted ({ACCEPTED_BY_LENIENCY[key].rule})"


def assert_same_place(error: str, schema_error: str | None) -> None:
    """The decode error points at the schema violation, or at a member or parent of it."""
    ours = re.search(r"at `\$([^`]*)`", error)
    theirs = re.match(r"at (/[^:]*|):", schema_error or "")
    if ours is None or theirs is None:
        return
    ours_tokens = re.sub(r"\[(\d+)\]", r".\1", ours.group(1)).split(".")[1:]
    theirs_tokens = _tokens(theirs.group(1)) if theirs.group(1) else []
    shorter = min(len(ours_tokens), len(theirs_tokens))
    assert ours_tokens[:shorter] == theirs_tokens[:shorter], (
        f"decode error and schema error point at different places:\n  {error}\n  {schema_error}"
    )


def test_accepted_by_leniency_is_complete() -> None:
    """ACCEPTED_BY_LENIENCY lists exactly the invalid examples that decode with a typed payload."""
    accepted = set()
    for example in EXAMPLES.values():
        for surface in SURFACES:
            key = (example["id"], surface)
            if (
                not surface.startswith(example["version"])
                or is_valid(example, surface)
                or key in KNOWN_BUGS
                or without_def(example)
            ):
                continue
            try:
                if decode_example(example, surface).outcome != "unknown method":
                    accepted.add(key)
            except msgspec.ValidationError:
                pass
    assert accepted == set(ACCEPTED_BY_LENIENCY)
