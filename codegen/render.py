"""IR -> Python source fragments: type expressions, literals and docstrings.

Everything taken from the schema (names, wire names, const values, descriptions)
reaches generated code through `literal()` or `docstring()` here, never by plain
string pasting: schema text is data, not code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from . import ir

INT64_MAX = 2**63 - 1

Kind = Literal["object", "array", "str", "int", "float", "bool", "null", "any", "mixed"]


def literal(value: object) -> str:
    """A Python literal for a JSON scalar (repr escapes quotes, backslashes and newlines)."""
    if isinstance(value, bool) or value is None or isinstance(value, int | float | str):
        return repr(value)
    raise TypeError(f"not a JSON scalar: {value!r}")


def oneline(text: str) -> str:
    """Text for a comment or docstring line: as is when plain, else its escaped repr."""
    plain = text.isprintable() and not any(c in text for c in '"\\')
    return text if plain else repr(text)


def docstring(text: str, indent: str = "") -> str:
    """A triple-quoted docstring that no description can break out of."""
    body = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    body = "".join(c if c in "\n\t" or c.isprintable() else f"\\x{ord(c):02x}" for c in body)
    if body.endswith('"'):
        body += " "
    if "\n" not in body:
        return f'{indent}"""{body}"""'
    lines = body.split("\n")
    inner = "\n".join(f"{indent}{line}" if line.strip() else "" for line in lines)
    return f'{indent}"""\n{inner}\n{indent}"""'


@dataclass(frozen=True)
class TypeRenderer:
    """Renders IR types as Python annotations for one module."""

    defs: dict[str, ir.Definition]

    def annotation(self, t: ir.TypeRef) -> str:
        if isinstance(t, ir.Prim):
            return self._prim(t)
        if isinstance(t, ir.Ref):
            return t.name
        if isinstance(t, ir.ListOf):
            inner = f"list[{self.annotation(t.item)}]"
            return f"Annotated[{inner}, Meta(min_length={t.min_items})]" if t.min_items else inner
        if isinstance(t, ir.MapOf):
            return f"dict[str, {self.annotation(t.value)}]"
        if isinstance(t, ir.Nullable):
            return f"{self.annotation(t.inner)} | None"
        values = ", ".join(literal(v) for v in t.values)
        return f"OpenLiteral[Literal[{values}]]" if t.open else f"Literal[{values}]"

    def _prim(self, t: ir.Prim) -> str:
        base = {
            "str": "str",
            "int": "int",
            "float": "float",
            "bool": "bool",
            "null": "None",
            "any": "Any",
        }[t.kind]
        meta = []
        # msgspec bounds must fit in int64; its integer decoding already stops at the uint64 maximum.
        if t.le is not None and t.le > INT64_MAX:
            t = ir.Prim(t.kind, t.ge, None, t.min_length, t.format, t.pattern)
        if t.ge is not None:
            meta.append(f"ge={literal(t.ge)}")
        if t.le is not None:
            meta.append(f"le={literal(t.le)}")
        if t.min_length is not None:
            meta.append(f"min_length={t.min_length}")
        if t.pattern is not None:
            meta.append(f"pattern={literal(t.pattern)}")
        return f"Annotated[{base}, Meta({', '.join(meta)})]" if meta else base

    def kind(self, t: ir.TypeRef) -> Kind:
        """The JSON kind msgspec sees, to decide which union members it can decode natively."""
        if isinstance(t, ir.Prim):
            return t.kind
        if isinstance(t, ir.ListOf):
            return "array"
        if isinstance(t, ir.MapOf):
            return "object"
        if isinstance(t, ir.Nullable | ir.Const):
            return "mixed"
        target = self.defs[t.name]
        if isinstance(target, ir.StructDef):
            return "object"
        if isinstance(target, ir.EnumDef):
            return target.base
        if isinstance(target, ir.AliasDef):
            return self.kind(target.target)
        return "mixed"

    def native_members(self, union: ir.UnionDef) -> list[ir.TypeRef]:
        """The members one msgspec union can decode: tagged structs plus one member per JSON kind."""
        members: list[ir.TypeRef] = [ir.Ref(v) for v in union.variants]
        used: set[Kind] = {"object"} if union.variants else set()
        for member in union.untagged:
            kind = self.kind(member)
            if kind in ("any", "mixed") or kind in used:
                continue
            members.append(member)
            used.add(kind)
        return members
