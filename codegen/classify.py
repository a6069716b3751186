"""Schema -> IR. Every node shape the ACP schema uses is named here; anything else fails loudly.

A new schema release with a shape this module does not know must stop generation
with a message naming the JSON pointer, never be translated by guesswork.
"""

from __future__ import annotations

import keyword
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from . import ir
from .names import unknown_variant_names, variant_name
from .naming import camel_case, snake_case
from .patch_semantics import patch_fields

Node = Mapping[str, Any]

# Keys that never change a node's shape.
ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "deprecated",
        "x-method",
        "x-side",
        "x-docs-ignore",
        "discriminator",  # v1 only; the tag is read from each variant's `const`
        "x-deserialize-default-on-error",
        "x-deserialize-default-on-null",
        "x-deserialize-skip-invalid-items",
        # annotation-only formats and encodings on strings
        "contentEncoding",
    }
)

# `format` on integers: the range it implies.
INT_FORMATS: Mapping[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "uint": (0, 2**64 - 1),
    "int": (-(2**63), 2**63 - 1),
}
FLOAT_FORMATS = frozenset({"float", "double"})
STRING_FORMATS = frozenset({"uri", "date-time", "uuid", "email", "uri-reference", "regex"})

# JSON-RPC envelope definitions (marked `x-docs-ignore`) by name suffix: the role of the $defs
# they list. The root schema's `ProtocolLevel` branch lists protocol-wide notifications.
ENVELOPE_ROLES = {"Request": "request", "Notification": "notification", "Response": "result"}
PROTOCOL_SIDE = "protocol"


class ShapeError(Exception):
    """The schema contains a node shape the classifier does not know."""

    def __init__(self, pointer: str, message: str, node: object = None) -> None:
        detail = f"\n  node keys: {sorted(node)}" if isinstance(node, Mapping) else ""
        super().__init__(f"{pointer}: {message}{detail}")


def _expect_keys(node: Node, allowed: set[str] | frozenset[str], pointer: str, what: str) -> None:
    unknown = set(node) - ANNOTATIONS - allowed
    if unknown:
        raise ShapeError(pointer, f"unknown keys {sorted(unknown)} in a {what} node", node)


def _ref_name(ref: str, pointer: str) -> str:
    prefix = "#/$defs/"
    if not ref.startswith(prefix):
        raise ShapeError(pointer, f"unsupported $ref {ref!r}")
    return ref[len(prefix) :]


def _single_ref(node: Node, pointer: str) -> str | None:
    """`{"allOf": [{"$ref": X}]}` or `{"$ref": X}` -> X."""
    if "$ref" in node:
        return _ref_name(node["$ref"], pointer)
    all_of = node.get("allOf")
    if all_of is None:
        return None
    if len(all_of) != 1 or set(all_of[0]) != {"$ref"}:
        raise ShapeError(pointer, "allOf must hold exactly one $ref", node)
    return _ref_name(all_of[0]["$ref"], f"{pointer}/allOf/0")


def _doc(node: Node) -> str:
    return str(node.get("description", "")).strip()


def _types(node: Node) -> tuple[set[str], bool]:
    """The JSON types of a node, and whether it admits null."""
    raw = node.get("type")
    types = {raw} if isinstance(raw, str) else set(raw or ())
    return types - {"null"}, "null" in types


def _variant_tag(node: Node) -> tuple[str, str] | None:
    """(tag field, const value) of a tagged union variant, if it is one."""
    consts = [(k, v["const"]) for k, v in node.get("properties", {}).items() if "const" in v]
    if len(consts) > 1:
        raise ShapeError("", f"variant with more than one const property: {consts}")
    if consts and consts[0][0] in node.get("required", ()):
        return consts[0][0], str(consts[0][1])
    return None


def _is_other_branch(node: Node) -> bool:
    return node.get("title") == "other" and node.get("type") == "object"


def _takes_unknown_tags(member: Node, tag: str) -> bool:
    """A default variant whose description says unknown tags decode into it (v1's
    `SetSessionConfigOptionRequest`: "Unknown `type` values ... deserialize into this variant")."""
    doc = " ".join(_doc(member).split())
    return f"Unknown `{tag}` values" in doc and "into this variant" in doc


def _unknown_tag_doc(tag: str) -> str:
    return (
        f"A variant whose `{tag}` this schema release does not know, kept as received.\n\n"
        f"The default variant applies only when `{tag}` is absent."
    )


def _is_none_branch(node: Node, tag: str) -> bool:
    props = node.get("properties", {})
    return node.get("title") == "none" and props.get(tag) == {"type": "null"}


class Classifier:
    def __init__(
        self,
        schema: Node,
        *,
        version: str,
        unstable: bool,
        source: str,
        sha256: str,
    ) -> None:
        self.root = schema
        self.defs: Mapping[str, Node] = schema["$defs"]
        self.module = ir.Module(version, unstable, source, sha256)
        self.envelopes = {n for n, node in self.defs.items() if node.get("x-docs-ignore")}
        self.ref_counts = Counter(
            name
            for def_name, node in self.defs.items()
            if def_name not in self.envelopes
            for name in _refs_in(node)
        )
        self.nested: set[str] = (
            set()
        )  # defs flattened into a variant; emitted only if used directly
        self.children: dict[str, list[str]] = {}  # union -> the variant structs it created
        self.absorbed: set[str] = set()  # payload defs whose name a variant struct took over
        self.result: dict[str, ir.Definition] = {}
        self.taken_names = set(self.defs)
        self.rule_named: dict[str, tuple[str, str]] = {}  # variants names.py does not pin

    # ------------------------------------------------------------------ top level

    def run(self) -> ir.Module:
        for name in self.envelopes:
            if not any(name.endswith(suffix) for suffix in ENVELOPE_ROLES):
                raise ShapeError(
                    f"#/$defs/{name}", "x-docs-ignore on a definition that is no envelope"
                )
        for name, node in self.defs.items():
            if name not in self.envelopes and name not in self.absorbed:
                self._classify(name, node)
        for name in self.nested - self.absorbed:
            if self.ref_counts[name] <= 1:
                self.result.pop(name, None)
                for child in self.children.get(name, ()):
                    if self.ref_counts[child] == 0:
                        self.result.pop(child, None)
        self._drop_unreachable()
        self.module.definitions = _topological(self.result)
        self.module.unpinned = sorted(
            (union, tag, name)
            for name, (union, tag) in self.rule_named.items()
            if name in self.result
        )
        self.module.methods = list(self._methods())
        return self.module

    def _drop_unreachable(self) -> None:
        """Schema types used only flattened into other structs (`ContentChunk`, the payloads of
        a merged union): nothing decodes into them, so they are not generated."""
        todo = [n for n in self.result if n in self.defs and self.ref_counts[n] == 0]
        reached: set[str] = set()
        while todo:
            name = todo.pop()
            if name not in reached and name in self.result:
                reached.add(name)
                todo.extend(_depends_on(self.result[name]))
        for name in set(self.result) - reached:
            del self.result[name]

    def _classify(self, name: str, node: Node) -> None:
        pointer = f"#/$defs/{name}"
        union = node.get("anyOf", node.get("oneOf"))
        if union is not None and ("properties" in node or node.get("type") == "object"):
            self._object_union(name, node, union, pointer)
        elif union is not None:
            if all(_is_enum_member(m) for m in union) and any("const" in m for m in union):
                self._enum(name, node, union, pointer)
            else:
                self._union(name, node, union, pointer)
        elif "properties" in node or node.get("type") == "object":
            _expect_keys(
                node, {"type", "properties", "required", "additionalProperties"}, pointer, "struct"
            )
            self.result[name] = ir.StructDef(
                name, _doc(node), self._fields(node, pointer), source=pointer
            )
        elif "allOf" in node:
            _expect_keys(node, {"allOf"}, pointer, "alias")
            target = _single_ref(node, pointer)
            assert target is not None
            self.result[name] = ir.AliasDef(name, _doc(node), ir.Ref(target))
        else:
            self.result[name] = ir.AliasDef(name, _doc(node), self._type(node, pointer))

    # ------------------------------------------------------------------ structs

    def _fields(self, node: Node, pointer: str, tag: str | None = None) -> tuple[ir.Field, ...]:
        """The struct fields of an object node; `tag` names a discriminator to leave out."""
        required = set(node.get("required", ())) - {tag}
        patch = patch_fields(node)
        fields: list[ir.Field] = []
        seen: dict[str, str] = {}
        for wire, prop in node.get("properties", {}).items():
            if wire == tag:
                continue
            prop_pointer = f"{pointer}/properties/{wire}"
            if any(c in wire for c in '"\\') or not wire.isprintable():
                raise ShapeError(prop_pointer, f"msgspec cannot use {wire!r} as a wire name")
            attr = snake_case(wire)
            if attr in seen:
                raise ShapeError(prop_pointer, f"attribute {attr!r} clashes with {seen[attr]!r}")
            seen[attr] = wire
            ftype = self._type(prop, prop_pointer)
            field = ir.Field(
                attr=attr,
                wire=wire,
                type=ftype,
                required=wire in required,
                doc=_doc(prop),
                leniency=_leniency(prop),
                default_json=prop.get("default"),
            )
            if wire in patch and not field.required and field.nullable:
                field = ir.Field(**{**field.__dict__, "three_state": True})
            fields.append(field)
        missing = required - set(node.get("properties", {})) - {None}
        if missing:
            raise ShapeError(pointer, f"required names without properties: {sorted(missing)}")
        return tuple(fields)

    # ------------------------------------------------------------------ field types

    def _type(self, node: Node, pointer: str) -> ir.TypeRef:
        ref = _single_ref(node, pointer)
        if ref is not None:
            _expect_keys(node, {"allOf", "$ref"}, pointer, "reference")
            return ir.Ref(ref)
        if "anyOf" in node:
            _expect_keys(node, {"anyOf"}, pointer, "nullable reference")
            members = node["anyOf"]
            nulls = [m for m in members if m == {"type": "null"}]
            rest = [m for m in members if m != {"type": "null"}]
            if len(nulls) != 1 or len(rest) != 1:
                raise ShapeError(pointer, "anyOf in a property must be exactly [X, null]", node)
            return ir.Nullable(self._type(rest[0], f"{pointer}/anyOf/0"))
        types, nullable = _types(node)
        inner = self._plain_type(node, types, pointer)
        return ir.Nullable(inner) if nullable and types else inner

    def _plain_type(self, node: Node, types: set[str], pointer: str) -> ir.TypeRef:
        if not types and _types(node)[1]:
            _expect_keys(node, {"type"}, pointer, "null")
            return ir.Prim("null")
        if not types:
            _expect_keys(node, {"type"}, pointer, "untyped")
            return ir.Prim("any")
        if len(types) != 1:
            raise ShapeError(pointer, f"several non-null types {sorted(types)}", node)
        (kind,) = types
        fmt = node.get("format")
        if kind == "string":
            _expect_keys(node, {"type", "format", "minLength", "pattern"}, pointer, "string")
            if fmt is not None and fmt not in STRING_FORMATS:
                raise ShapeError(pointer, f"unknown string format {fmt!r}")
            return ir.Prim(
                "str", min_length=node.get("minLength"), format=fmt, pattern=node.get("pattern")
            )
        if kind == "integer":
            _expect_keys(node, {"type", "format", "minimum", "maximum"}, pointer, "integer")
            lo, hi = INT_FORMATS.get(fmt, (None, None)) if fmt else (None, None)
            if fmt and fmt not in INT_FORMATS:
                raise ShapeError(pointer, f"unknown integer format {fmt!r}")
            lo = (
                max(lo, node["minimum"])
                if lo is not None and "minimum" in node
                else node.get("minimum", lo)
            )
            hi = (
                min(hi, node["maximum"])
                if hi is not None and "maximum" in node
                else node.get("maximum", hi)
            )
            return ir.Prim("int", ge=lo, le=hi, format=fmt)
        if kind == "number":
            _expect_keys(node, {"type", "format", "minimum", "maximum"}, pointer, "number")
            if fmt is not None and fmt not in FLOAT_FORMATS:
                raise ShapeError(pointer, f"unknown number format {fmt!r}")
            return ir.Prim("float", ge=node.get("minimum"), le=node.get("maximum"), format=fmt)
        if kind == "boolean":
            _expect_keys(node, {"type"}, pointer, "boolean")
            return ir.Prim("bool")
        if kind == "array":
            _expect_keys(node, {"type", "items", "minItems"}, pointer, "array")
            item = self._type(node["items"], f"{pointer}/items")
            return ir.ListOf(item, min_items=node.get("minItems"))
        if kind == "object":
            _expect_keys(node, {"type", "additionalProperties"}, pointer, "map")
            extra = node.get("additionalProperties", True)
            if extra is True:
                return ir.MapOf(ir.Prim("any"))
            if isinstance(extra, Mapping):
                return ir.MapOf(self._type(extra, f"{pointer}/additionalProperties"))
            raise ShapeError(pointer, "object property with additionalProperties false", node)
        raise ShapeError(pointer, f"unknown type {kind!r}", node)

    # ------------------------------------------------------------------ enums

    def _enum(self, name: str, node: Node, members: list[Node], pointer: str) -> None:
        _expect_keys(node, {"anyOf", "oneOf"}, pointer, "enum")
        values: list[ir.EnumValue] = []
        is_open = False
        bases = set()
        for m in members:
            types, _ = _types(m)
            bases |= types
            if "const" in m:
                values.append(ir.EnumValue(m["const"], _doc(m), m.get("title")))
            else:
                is_open = True
        if bases not in ({"string"}, {"integer"}):
            raise ShapeError(pointer, f"enum of mixed or unknown types {sorted(bases)}", node)
        base: Literal["str", "int"] = "str" if bases == {"string"} else "int"
        self.result[name] = ir.EnumDef(name, _doc(node), tuple(values), is_open, base)

    # ------------------------------------------------------------------ unions

    def _union(self, name: str, node: Node, members: list[Node], pointer: str) -> None:
        _expect_keys(node, {"anyOf", "oneOf"}, pointer, "union")
        tag = _union_tag(members, pointer)
        if tag is None:
            alternatives = tuple(
                self._untagged_member(name, m, f"{pointer}/anyOf/{i}")
                for i, m in enumerate(members)
            )
            self.result[name] = ir.UnionDef(name, _doc(node), None, (), alternatives, None)
            return
        self._tagged_union(name, node, members, tag, (), set(), pointer)

    def _object_union(self, name: str, node: Node, members: list[Node], pointer: str) -> None:
        """An object with its own properties and a union of variants flattened into it."""
        _expect_keys(
            node, {"type", "properties", "required", "anyOf", "oneOf"}, pointer, "object union"
        )
        tag = _union_tag(members, pointer)
        base = self._fields(node, pointer, tag)
        if tag is None:
            # Untagged alternatives (e.g. session vs request scope): one struct, checked on decode.
            self.result[name] = self._merged_struct(name, node, pointer)
            return
        self._tagged_union(name, node, members, tag, base, set(node.get("required", ())), pointer)

    def _tagged_union(
        self,
        name: str,
        node: Node,
        members: list[Node],
        tag: str,
        base: tuple[ir.Field, ...],
        base_required: set[str],
        pointer: str,
    ) -> None:
        key = "anyOf" if "anyOf" in node else "oneOf"
        variants: list[str] = []
        untagged: list[ir.TypeRef] = []
        titles: list[tuple[str, str]] = []  # (title, struct) of the default variants
        unknown: ir.UnknownVariant | None = None
        for i, member in enumerate(members):
            mp = f"{pointer}/{key}/{i}"
            found = _variant_tag(member)
            if found is not None:
                variants.append(self._variant(name, member, found[1], tag, base, mp))
                continue
            if _is_other_branch(member):
                unknown = ir.UnknownVariant(self._unknown_name(name), _doc(member))
                continue
            if set(member) - ANNOTATIONS == {"allOf"}:
                default = self._payload_ref(member, mp)
            elif member.get("type") == "object" and "title" in member:
                default = self._untagged_variant(name, member, base, mp)
            else:
                raise ShapeError(
                    mp, f"union member of {name} is neither tagged, other nor a $ref", member
                )
            untagged.append(ir.Ref(default))
            if "title" in member:
                titles.append((str(member["title"]), default))
        named_defaults: tuple[tuple[str, str], ...] = ()
        if unknown is None and untagged and not any(_takes_unknown_tags(m, tag) for m in members):
            # The default variant is for an absent tag (or its own name, the tag v2 gives it);
            # a present unknown tag is kept as is.
            unknown = ir.UnknownVariant(self._unknown_name(name), _unknown_tag_doc(tag))
            named_defaults = tuple(titles)
        self.children[name] = [*variants, *(t.name for t in untagged if isinstance(t, ir.Ref))]
        self.result[name] = ir.UnionDef(
            name, _doc(node), tag, tuple(variants), tuple(untagged), unknown, named_defaults
        )

    def _variant(
        self,
        union: str,
        member: Node,
        tag_value: str,
        tag: str,
        base: tuple[ir.Field, ...],
        pointer: str,
    ) -> str:
        _expect_keys(member, {"type", "properties", "required", "allOf"}, pointer, "variant")
        payload = _single_ref(member, pointer)
        own = self._fields(member, pointer, tag)
        fields: tuple[ir.Field, ...] = own
        merged: tuple[ir.MergedChecks, ...] = ()
        doc = _doc(member)
        if payload is not None:
            flat = self._flatten(payload)
            fields = _merge_fields(fields + flat.fields, pointer)
            merged = flat.merged
            doc = doc or flat.doc
        fields = _merge_fields(fields + base, pointer)
        struct_name = self._variant_name(union, tag_value, payload)
        self.result[struct_name] = ir.StructDef(
            struct_name, doc, fields, tag, tag_value, merged, source=pointer
        )
        return struct_name

    def _untagged_variant(
        self, union: str, member: Node, base: tuple[ir.Field, ...], pointer: str
    ) -> str:
        """An inline variant without a discriminator: the default when the tag is absent."""
        _expect_keys(member, {"type", "properties", "required"}, pointer, "default variant")
        fields = _merge_fields(self._fields(member, pointer) + base, pointer)
        struct_name = self._variant_name(union, str(member["title"]), None)
        self.result[struct_name] = ir.StructDef(struct_name, _doc(member), fields, source=pointer)
        return struct_name

    def _variant_name(self, union: str, tag_value: str, payload: str | None) -> str:
        """The pinned (or rule) name of a variant: see names.py. A variant named like its
        payload type takes the payload's place; the payload is then used by this variant only."""
        name, pinned = variant_name(self.module.version, union, tag_value)
        if not pinned:
            self.rule_named[name] = (union, tag_value)
        if name == payload and self.ref_counts[payload] == 1:
            self.absorbed.add(payload)
            return name
        if name in self.taken_names:
            raise ShapeError(
                f"#/$defs/{union}",
                f"variant {tag_value!r} would be named {name!r}, which another type has; "
                "pin another name in codegen/names.py",
            )
        self.taken_names.add(name)
        return name

    def _unknown_name(self, union: str) -> str:
        for candidate in unknown_variant_names(union):
            if candidate not in self.taken_names:
                self.taken_names.add(candidate)
                return candidate
        raise ShapeError(f"#/$defs/{union}", "no free name for the catch-all variant")

    def _payload_ref(self, member: Node, pointer: str) -> str:
        ref = _single_ref(member, pointer)
        assert ref is not None
        return ref

    def _untagged_member(self, union: str, member: Node, pointer: str) -> ir.TypeRef:
        if set(member) - ANNOTATIONS == {"allOf"}:
            return ir.Ref(self._payload_ref(member, pointer))
        if member.get("type") == "object" and "properties" in member and "title" in member:
            return ir.Ref(self._untagged_variant(union, member, (), pointer))
        if member.get("type") == "null":
            _expect_keys(member, {"type"}, pointer, "null")
            return ir.Prim("null")
        return self._type(
            {k: v for k, v in member.items() if k not in ("title", "description")}, pointer
        )

    # ------------------------------------------------------------------ flattening

    def _flatten(self, name: str) -> ir.StructDef:
        """The fields a variant gets from its payload definition (flattened on the wire)."""
        node = self.defs[name]
        pointer = f"#/$defs/{name}"
        if "anyOf" in node or "oneOf" in node:
            self.nested.add(name)
            return self._merged_struct(name, node, pointer)
        _expect_keys(
            node, {"type", "properties", "required", "additionalProperties"}, pointer, "payload"
        )
        return ir.StructDef(name, _doc(node), self._fields(node, pointer))

    def _merged_struct(self, name: str, node: Node, pointer: str) -> ir.StructDef:
        """A union nested inside a variant, merged into one struct with decode-time checks.

        msgspec gives a struct one discriminator; a second one on the same object (state_update ->
        state -> stopReason) becomes an ordinary field, and each alternative's required fields are
        checked in `__post_init__`.
        """
        key = "anyOf" if "anyOf" in node else "oneOf"
        members = node[key]
        tag = _union_tag(members, pointer)
        base = list(self._fields(node, pointer, tag))
        per_alt: list[tuple[str | None, tuple[ir.Field, ...], ir.MergedChecks | None]] = []
        tag_values: list[str] = []
        is_open = False
        tag_required = True
        tag_prop: Node = node.get("properties", {}).get(tag, {}) if tag is not None else {}
        for i, member in enumerate(members):
            mp = f"{pointer}/{key}/{i}"
            if tag is not None and _is_other_branch(member):
                is_open = True
                continue
            if tag is not None and _is_none_branch(member, tag):
                tag_required = False
                continue
            found = _variant_tag(member) if tag is not None else None
            own = self._fields(member, mp, tag)
            payload = _single_ref(member, mp)
            inner_checks: ir.MergedChecks | None = None
            if payload is not None:
                flat = self._flatten(payload)
                own = own + flat.fields
                inner_checks = flat.merged[0] if flat.merged else None
            if found is not None:
                tag_values.append(found[1])
            elif tag is not None:
                raise ShapeError(mp, "member of a tagged nested union without a tag", member)
            per_alt.append((found[1] if found else None, own, inner_checks))
        fields = list(base)
        all_alt_fields = [f for _, own, _ in per_alt for f in own]
        for f in _merge_fields(tuple(all_alt_fields), pointer):
            in_all = all(any(g.wire == f.wire and g.required for g in own) for _, own, _ in per_alt)
            fields.append(f if in_all else _optional(f))
        if tag is not None:
            tag_field = ir.Field(
                attr=snake_case(tag),
                wire=tag,
                type=ir.Const(tuple(tag_values), open=is_open),
                required=tag_required,
                doc=_doc(tag_prop),
                leniency=_leniency(tag_prop),
            )
            if not tag_required:
                tag_field = ir.Field(**{**tag_field.__dict__, "type": ir.Nullable(tag_field.type)})
            fields.insert(0, tag_field)
        checks = ir.MergedChecks(
            snake_case(tag) if tag else None,
            key == "oneOf" and tag is None,
            tuple(
                ir.VariantCheck(tv, tuple(f.attr for f in own if f.required))
                for tv, own, _ in per_alt
            ),
        )
        nested_checks = tuple(c for _, _, c in per_alt if c is not None)
        return ir.StructDef(
            name, _doc(node), _merge_fields(tuple(fields), pointer), merged=(checks, *nested_checks)
        )

    # ------------------------------------------------------------------ methods

    def _methods(self) -> Iterator[ir.Method]:
        """Method table from `x-method` / `x-side`; the envelope listing a def gives its role."""
        roles: dict[str, str] = {}
        for env_name in sorted(self.envelopes):
            role = next(r for suffix, r in ENVELOPE_ROLES.items() if env_name.endswith(suffix))
            for def_name in self._envelope_members(env_name):
                roles[def_name] = role
        for def_name in self._protocol_level_members():
            roles[def_name] = "notification"
        found: dict[tuple[str, str], dict[str, str]] = {}
        for def_name, node in self.defs.items():
            method = node.get("x-method")
            if method is None:
                continue
            if def_name not in roles:
                raise ShapeError(
                    f"#/$defs/{def_name}", f"x-method {method!r} not listed in any envelope"
                )
            entry = found.setdefault((str(node.get("x-side")), method), {})
            entry[roles[def_name]] = def_name
            if roles[def_name] != "result":
                entry["doc"] = _doc(node)
        for (side, method), entry in sorted(found.items()):
            kind: Literal["request", "notification"] = "request"
            if "request" in entry and "result" not in entry:
                raise ShapeError(
                    f"#/$defs/{entry['request']}", f"request {method} has no result type"
                )
            if "request" not in entry:
                if "notification" not in entry:
                    raise ShapeError(
                        "#/$defs", f"{side} method {method} has a result but no params"
                    )
                kind = "notification"
            params = entry.get("request", entry.get("notification"))
            yield ir.Method(method, side, kind, params, entry.get("result"), entry.get("doc", ""))

    def _protocol_level_members(self) -> Iterator[str]:
        for branch in self.root.get("anyOf", ()):
            if branch.get("title") == "ProtocolLevel":
                yield from self._listed_refs(
                    branch["properties"]["params"], "#/anyOf/ProtocolLevel"
                )

    def _envelope_members(self, env_name: str) -> Iterator[str]:
        node = self.defs[env_name]
        pointer = f"#/$defs/{env_name}"
        if "anyOf" in node:  # responses: Result | Error
            result = next(m for m in node["anyOf"] if "result" in m.get("properties", {}))
            yield from self._listed_refs(result["properties"]["result"], pointer)
        else:
            yield from self._listed_refs(node["properties"]["params"], pointer)

    def _listed_refs(self, holder: Node, pointer: str) -> Iterator[str]:
        for option in holder["anyOf"]:
            if option == {"type": "null"}:
                continue
            for i, member in enumerate(option.get("anyOf", [option])):
                ref = _single_ref(member, f"{pointer}/{i}")
                if ref is None:
                    raise ShapeError(pointer, "envelope member without $ref", member)
                yield ref


# ---------------------------------------------------------------------- helpers


def _leniency(prop: Node) -> ir.Leniency:
    return ir.Leniency(
        default_on_error=bool(prop.get("x-deserialize-default-on-error")),
        default_on_null=bool(prop.get("x-deserialize-default-on-null")),
        skip_invalid_items=bool(prop.get("x-deserialize-skip-invalid-items")),
    )


def _is_enum_member(member: Node) -> bool:
    types, nullable = _types(member)
    if nullable or len(types) != 1 or not types <= {"string", "integer"}:
        return False
    return set(member) - ANNOTATIONS - {"type", "format", "const"} == set()


def _union_tag(members: list[Node], pointer: str) -> str | None:
    tags = set()
    for m in members:
        found = _variant_tag(m)
        if found is not None:
            tags.add(found[0])
    if len(tags) > 1:
        raise ShapeError(pointer, f"union variants disagree on the discriminator: {sorted(tags)}")
    return tags.pop() if tags else None


def _optional(f: ir.Field) -> ir.Field:
    return ir.Field(**{**f.__dict__, "required": False})


def _merge_fields(fields: tuple[ir.Field, ...], pointer: str) -> tuple[ir.Field, ...]:
    """Fields of a flattened object; the same wire name twice must mean the same field."""
    out: dict[str, ir.Field] = {}
    for f in fields:
        prev = out.get(f.wire)
        if prev is None:
            out[f.wire] = f
        elif prev.type != f.type:
            raise ShapeError(
                pointer, f"flattened field {f.wire!r} has two types: {prev.type} / {f.type}"
            )
        elif f.required and not prev.required:
            out[f.wire] = f
    return tuple(out.values())


def _refs_in(node: object) -> Iterator[str]:
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref.rsplit("/", 1)[-1]
        for value in node.values():
            yield from _refs_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs_in(value)


def type_refs(t: ir.TypeRef) -> Iterator[str]:
    if isinstance(t, ir.Ref):
        yield t.name
    elif isinstance(t, ir.ListOf):
        yield from type_refs(t.item)
    elif isinstance(t, ir.MapOf):
        yield from type_refs(t.value)
    elif isinstance(t, ir.Nullable):
        yield from type_refs(t.inner)


def _depends_on(d: ir.Definition) -> Iterator[str]:
    if isinstance(d, ir.StructDef):
        for f in d.fields:
            yield from type_refs(f.type)
    elif isinstance(d, ir.AliasDef):
        yield from type_refs(d.target)
    elif isinstance(d, ir.UnionDef):
        for m in d.members:
            yield from type_refs(m)


def _topological(defs: dict[str, ir.Definition]) -> list[ir.Definition]:
    """Definitions ordered so that each comes after everything it refers to (the schema has no cycles)."""
    ordered: list[ir.Definition] = []
    state: dict[str, int] = {}

    def visit(name: str, path: tuple[str, ...]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise ShapeError(f"#/$defs/{name}", f"recursive definition: {' -> '.join(path)}")
        if name not in defs:
            raise ShapeError(f"#/$defs/{name}", f"referenced from {path[-1]} but not generated")
        state[name] = 1
        for dep in _depends_on(defs[name]):
            visit(dep, (*path, dep))
        state[name] = 2
        ordered.append(defs[name])

    for name in sorted(defs):
        visit(name, (name,))
    return ordered


def python_def_names(schema: Node) -> Node:
    """The schema with every $def named by a safe Python identifier (refs rewritten to match).

    Names are data: a def called `class` or `my-type` must not reach generated code as is.
    """
    renames = {name: _identifier(name) for name in schema.get("$defs", {})}
    if len(set(renames.values())) != len(renames):
        raise ShapeError("#/$defs", "two $defs map to the same Python name")
    if all(old == new for old, new in renames.items()):
        return schema

    def rewrite(node: Any) -> Any:
        if isinstance(node, Mapping):
            out = {k: rewrite(v) for k, v in node.items()}
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                out["$ref"] = "#/$defs/" + renames.get(ref[len("#/$defs/") :], ref[8:])
            return out
        if isinstance(node, list):
            return [rewrite(v) for v in node]
        return node

    rewritten = dict(rewrite(schema))
    rewritten["$defs"] = {renames[k]: v for k, v in rewritten["$defs"].items()}
    return rewritten


def _identifier(name: str) -> str:
    if name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_"):
        return name
    return camel_case(name)


def classify(
    schema: Node,
    *,
    version: str,
    unstable: bool,
    source: str,
    sha256: str,
) -> ir.Module:
    """The IR of one schema file. Three-state patch fields are those the schema's descriptions
    say are (codegen/patch_semantics.py)."""
    return Classifier(
        python_def_names(schema),
        version=version,
        unstable=unstable,
        source=source,
        sha256=sha256,
    ).run()
