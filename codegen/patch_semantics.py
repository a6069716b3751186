"""Which fields have three-state patch semantics, read from the schema's own descriptions.

A patch field looks like any optional nullable field in JSON Schema; what makes it three-state
(omitted = unchanged, `null` = clear, a value = replace) is said in prose. Every patch field of
the vendored schema releases says so in one of these ways (whitespace normalised; quoted from
schema/v{1,2}/schema[.unstable].json):

The type's description covers some or all of its fields:

- names them: "`summary`, `error`, and `_meta` have patch semantics: omission leaves the stored
  value unchanged, `null` clears it, ..." (CompactionUpdate); "`content` has patch semantics: an
  omitted field leaves existing message content unchanged, `null` clears the value, ..."
  (UserMessage, AgentMessage, AgentThought);
- every field but the required ones: "Only `toolCallId` is required. Other fields have patch
  semantics: omitted fields leave the existing tool call value unchanged, `null` clears or
  unsets the value, ..." (ToolCallUpdate, TerminalUpdate, SubagentUpdate);
- every field: "All fields are optional to support partial updates." (SessionInfoUpdate, whose
  fields add "Set to null to clear."), or "Omitted fields leave the existing session info
  unchanged. `null` clears the corresponding value." (v2 SessionInfoUpdate).

Or the field's own description says both halves: omission leaves it unchanged ("Omission leaves
the title unchanged", "Omission means no change", "Omitted leaves the last reported cost
unchanged", "Omitted means unchanged") and `null` clears, unsets, resets or removes it ("`null`
unsets it", "`null` resets it to `other`", "`null` removes the current report", "`null` or `[]`
clears it"). The protocol repository's main branch words `_meta` "Omitted means no metadata
update; `null` is an explicit clear signal.", which is recognised too.

A field whose description says omission and `null` mean the same ("Omitted and `null` are
equivalent", "Omitting it or sending `null` both mean ...") is never a patch field, whatever its
type says. Only optional fields that admit null can be three-state: the rule returns no other.

codegen/patch_fields.py keeps the hand-written list of the vendored release; it is a cross-check
of this rule (a test fails when they disagree for the vendored schema), never an input.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

Node = Mapping[str, Any]

# A property schema with none of these keys accepts any JSON value, null included.
STRUCTURAL_KEYS = frozenset({"type", "$ref", "anyOf", "oneOf", "allOf", "const", "enum", "not"})

_NAMED = re.compile(r"((?:`[^`]+`(?:,\s*|\s+)(?:and\s+)?)+)(?:has|have)\s+patch\s+semantics")
_NAME = re.compile(r"`([^`]+)`")
_OTHERS = re.compile(r"\bOther fields have patch semantics\b")
_ALL = (
    re.compile(r"\bAll fields are optional to support partial updates\b"),
    re.compile(r"\bOmitted fields leave\b[^.]*\bunchanged\b.*?`null` clears\b"),
)
_OMISSION = re.compile(
    r"\b(?:Omission|Omitted|Omitting it)\s+"
    r"(?:leaves\b[^.]*\bunchanged\b|means\s+(?:unchanged|no\s+(?:[\w-]+\s+)?(?:change|update))\b)"
)
_NULL = re.compile(
    r"`null`(?:\s+or\s+`[^`]*`)?\s+(?:clears|unsets|resets|removes)\b"
    r"|`null`\s+is\s+an\s+explicit\s+clear\b|\bSet to null to clear\b"
)
_SAME_MEANING = re.compile(
    r"\b(?:Omission|Omitted|Omitting)\b[^.]*\bnull\b[^.]*\b(?:equivalent|both)\b", re.IGNORECASE
)


def _prose(node: object) -> str:
    """A node's description on one line."""
    if not isinstance(node, Mapping):
        return ""
    return " ".join(str(node.get("description", "")).split())


def _union_members(prop: Node) -> Iterator[Any]:
    for key in ("anyOf", "oneOf"):
        members = prop.get(key, [])
        if isinstance(members, list):
            yield from members


def admits_null(prop: Any) -> bool:
    """Whether a property schema accepts null: a null type, a null union member, or no type at all."""
    if prop is True:
        return True
    if not isinstance(prop, Mapping):
        return False
    type_ = prop.get("type")
    if type_ == "null" or (isinstance(type_, list) and "null" in type_):
        return True
    if any(isinstance(m, Mapping) and m.get("type") == "null" for m in _union_members(prop)):
        return True
    return not (STRUCTURAL_KEYS & prop.keys())


def _covered_by_type(doc: str, properties: Node, required: set[str]) -> set[str]:
    """The fields the type's own description gives patch semantics."""
    if any(pattern.search(doc) for pattern in _ALL):
        return set(properties)
    covered = {name for match in _NAMED.finditer(doc) for name in _NAME.findall(match[1])}
    if _OTHERS.search(doc):
        covered |= set(properties) - required
    return covered


def _says_patch(prop: object) -> bool:
    doc = _prose(prop)
    return bool(_OMISSION.search(doc) and _NULL.search(doc))


def _says_same_meaning(prop: object) -> bool:
    return bool(_SAME_MEANING.search(_prose(prop)))


def patch_fields(node: Node) -> frozenset[str]:
    """The wire names of an object node's three-state patch fields (see the module docstring)."""
    properties = node.get("properties", {})
    if not isinstance(properties, Mapping):
        return frozenset()
    required = set(node.get("required", ()))
    by_type = _covered_by_type(_prose(node), properties, required)
    return frozenset(
        name
        for name, prop in properties.items()
        if name not in required
        and admits_null(prop)
        and not _says_same_meaning(prop)
        and (name in by_type or _says_patch(prop))
    )


def schema_patch_fields(schema: Node) -> dict[str, frozenset[str]]:
    """$def name -> its patch fields, for every $def that has any."""
    defs = schema.get("$defs", {})
    found = {name: patch_fields(body) for name, body in defs.items() if isinstance(body, Mapping)}
    return {name: fields for name, fields in sorted(found.items()) if fields}
