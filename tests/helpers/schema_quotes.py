"""The schema's descriptions as one normalized text, for tests that check a quote from the
schema is verbatim (the rules of `acpwire check`)."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from helpers.paths import ROOT

__all__ = ["SPEC_SOURCE", "assert_sources_quoted", "normalized", "schema_descriptions"]

SPEC_SOURCE = re.compile(r"spec (v1|v2|rfds)/[a-z-]+\.md § .+")
"""How a rule names a spec page and section."""


def normalized(text: str) -> str:
    """Markdown links as their text, whitespace runs as one space."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return " ".join(text.split())


@functools.cache
def schema_descriptions() -> str:
    """Every description of schema/v1 and schema/v2, normalized."""
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("description"), str):
                found.append(node["description"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for version in ("v1", "v2"):
        walk(json.loads((ROOT / "schema" / version / "schema.json").read_text()))
    return normalized("\n".join(found))


def assert_sources_quoted(rule: Any) -> None:
    """Each of a check rule's schema quotes is verbatim in a description of schema/; each spec
    source names its page and section (the pages are not in the repository)."""
    descriptions = schema_descriptions()
    for source in rule.sources:
        if source.where.startswith("schema "):
            assert normalized(source.quote) in descriptions, source
        else:
            assert SPEC_SOURCE.fullmatch(source.where), source
