"""Cross-check our plain structs against datamodel-code-generator (dmcg), an independent generator.

dmcg is run on each vendored schema file with msgspec output. For every schema `$def` that is a
plain object (no anyOf/oneOf/allOf at definition level; found from the schema JSON, not from our
IR) both generators must agree on the wire field names and on which fields are required (have no
default). Types are not compared: ours differ by design (UNSET, open enums, lenient unions).

How dmcg names fields (0.89, msgspec output, default options): a wire name that is a valid
identifier is kept as the attribute (camelCase stays camelCase); the only rename in the ACP schema
is `_meta` -> `field_meta` with `msgspec.field(name="_meta")`. We snake_case attributes and keep
the wire name with `msgspec.field(name=...)`. Comparing `FieldInfo.encode_name` makes both agree.
Classes are matched to `$defs` through dmcg's `--emit-model-metadata` map (source JSON pointer),
so a dmcg class rename could not pair the wrong classes.

Two kinds of plain definitions:

- 1:1: our struct of the same name was generated from `#/$defs/<Name>` itself. Fields must equal
  dmcg's and the schema's exactly.
- flattened: the definition is the payload of exactly one tagged union variant, and our struct of
  the same name *is* that variant (tag set in the struct config). Its fields are the payload's plus
  the union's own properties and the variant's own properties (tag excluded). Those extras are
  computed from the schema JSON; everything else must equal dmcg's payload class.

Envelope definitions (`x-docs-ignore`: ClientRequest, AgentNotification, ...) are plain objects too,
but are not generated as types (the runtime has generic JSON-RPC envelopes), so they are skipped.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

from codegen import ir
from codegen.__main__ import load_modules
from codegen.lock import read_lock
from helpers.paths import ROOT

SCHEMA_DIR = ROOT / "schema"
# our module -> vendored schema file
SURFACES = {
    "v1": "v1/schema.json",
    "v1.unstable": "v1/schema.unstable.json",
    "v2": "v2/schema.json",
    "v2.unstable": "v2/schema.unstable.json",
}
DMCG_TIMEOUT = 600

# Known places where dmcg deviates from the schema while ours follows it, as
# {(surface, def name, wire name): why}. Empty: on the ACP 2.4.0 schema the two generators agree on
# every plain struct. An entry here is still checked: ours must match the schema there, and dmcg
# must still deviate (a stale entry fails).
KNOWN_DMCG_DEVIATIONS: dict[tuple[str, str, str], str] = {}

Fields = dict[str, bool]  # wire name -> required


# --------------------------------------------------------------------------- running dmcg


@dataclass
class DmcgRun:
    schema_file: str
    out: Path
    proc: subprocess.Popen[bytes]
    module: ModuleType | None = None
    by_pointer: dict[str, list[str]] = field(default_factory=dict)

    @property
    def py(self) -> Path:
        return self.out / "models.py"

    @property
    def meta(self) -> Path:
        return self.out / "models.meta.json"


class DmcgCache:
    """Starts dmcg on every schema file at once (about 2 s each), imports each result on demand."""

    def __init__(self, tmp: Path) -> None:
        self.runs: dict[str, DmcgRun] = {}
        self.imported: list[str] = []
        for surface, schema_file in SURFACES.items():
            out = tmp / surface.replace(".", "_")
            out.mkdir(parents=True)
            cmd = [
                sys.executable,
                "-W",
                "ignore",
                "-m",
                "datamodel_code_generator",
                "--input",
                str(SCHEMA_DIR / schema_file),
                "--input-file-type",
                "jsonschema",
                "--output-model-type",
                "msgspec.Struct",
                "--target-python-version",
                "3.11",
                "--formatters",
                "builtin",
                "--disable-timestamp",
                "--output",
                str(out / "models.py"),
                "--emit-model-metadata",
                str(out / "models.meta.json"),
            ]
            log = (out / "dmcg.log").open("wb")
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=out)
            log.close()
            self.runs[surface] = DmcgRun(schema_file, out, proc)

    def get(self, surface: str) -> DmcgRun:
        run = self.runs[surface]
        if run.module is not None:
            return run
        rc = run.proc.wait(timeout=DMCG_TIMEOUT)
        log = (run.out / "dmcg.log").read_text(errors="replace")
        assert rc == 0, f"datamodel-codegen failed on {run.schema_file} (rc={rc}):\n{log[-4000:]}"
        name = f"_dmcg_acp_{surface.replace('.', '_')}"
        spec = importlib.util.spec_from_file_location(name, run.py)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # msgspec resolves the postponed annotations through it
        self.imported.append(name)
        spec.loader.exec_module(module)
        for model in json.loads(run.meta.read_text())["models"]:
            ref: str = model["source_ref"]
            pointer = "#" + ref.split("#", 1)[1]
            run.by_pointer.setdefault(pointer, []).append(model["class_name"])
        run.module = module
        return run

    def close(self) -> None:
        for run in self.runs.values():
            if run.proc.poll() is None:
                run.proc.kill()
                run.proc.wait()
        for name in self.imported:
            sys.modules.pop(name, None)


@pytest.fixture(scope="module")
def dmcg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DmcgCache]:
    cache = DmcgCache(tmp_path_factory.mktemp("dmcg"))
    try:
        yield cache
    finally:
        cache.close()


@pytest.fixture(scope="module")
def ir_modules() -> dict[str, ir.Module]:
    return {f"{m.version}{'.unstable' if m.unstable else ''}": m for m in load_modules(SCHEMA_DIR)}


# --------------------------------------------------------------------------- schema side


def load_schema(surface: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMA_DIR / SURFACES[surface]).read_text())
    return data


def plain_object_defs(schema: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """`$defs` that are plain objects: object type or properties, no anyOf/oneOf/allOf."""
    return {
        name: node
        for name, node in schema["$defs"].items()
        if not {"anyOf", "oneOf", "allOf"} & set(node)
        and (node.get("type") == "object" or "properties" in node)
        and not node.get("x-docs-ignore")
    }


def schema_fields(node: Mapping[str, Any], drop: str | None = None) -> Fields:
    required = set(node.get("required", ()))
    return {w: w in required for w in node.get("properties", {}) if w != drop}


def _payload_ref(member: Mapping[str, Any]) -> str | None:
    if "$ref" in member:
        return str(member["$ref"])
    all_of = member.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        return str(all_of[0]["$ref"])
    return None


@dataclass(frozen=True)
class VariantSite:
    union: str
    pointer: str
    tag: str
    tag_value: str
    extra: Fields  # the union's own and the variant's own properties, tag excluded


def variant_sites(schema: Mapping[str, Any], name: str) -> list[VariantSite]:
    """Every tagged union member in the schema whose payload is `#/$defs/<name>`."""
    sites = []
    for union, node in schema["$defs"].items():
        key = "anyOf" if "anyOf" in node else "oneOf" if "oneOf" in node else None
        if key is None:
            continue
        for i, member in enumerate(node[key]):
            if _payload_ref(member) != f"#/$defs/{name}":
                continue
            consts = [
                (k, p["const"])
                for k, p in member.get("properties", {}).items()
                if "const" in p and k in member.get("required", ())
            ]
            if len(consts) != 1:
                continue
            tag, value = consts[0]
            extra = schema_fields(node, drop=tag)
            for wire, req in schema_fields(member, drop=tag).items():
                extra[wire] = extra.get(wire, False) or req
            sites.append(VariantSite(union, f"#/$defs/{union}/{key}/{i}", tag, str(value), extra))
    return sites


# --------------------------------------------------------------------------- generated side


def struct_fields(cls: type) -> Fields:
    assert isinstance(cls, type) and issubclass(cls, msgspec.Struct), cls
    return {f.encode_name: f.required for f in msgspec.structs.fields(cls)}


def ours(surface: str) -> ModuleType:
    return importlib.import_module(f"acp_schema.{surface}")


def dmcg_class(run: DmcgRun, name: str) -> type:
    pointer = f"#/$defs/{name}"
    classes = run.by_pointer.get(pointer, [])
    assert len(classes) == 1, f"dmcg made {classes or 'no class'} for {pointer}"
    cls = getattr(run.module, classes[0])
    assert isinstance(cls, type)
    return cls


def describe(wire: str, a: Fields, b: Fields, schema: Fields) -> str:
    def state(f: Fields) -> str:
        return "absent" if wire not in f else "required" if f[wire] else "optional"

    return f"{wire!r}: ours {state(a)}, dmcg {state(b)}, schema {state(schema)}"


def disagreements(surface: str, name: str, got: Fields, dm: Fields, expected: Fields) -> list[str]:
    """Wire names where ours, dmcg and the schema do not all agree (known deviations checked)."""
    out = []
    for wire in sorted(set(got) | set(dm) | set(expected)):
        states = {k: (wire in f, f.get(wire)) for k, f in (("o", got), ("d", dm), ("s", expected))}
        known = KNOWN_DMCG_DEVIATIONS.get((surface, name, wire))
        if known is not None:
            if states["o"] != states["s"] or states["d"] == states["s"]:
                out.append(
                    f"{name}.{describe(wire, got, dm, expected)} (stale known deviation: {known})"
                )
        elif len(set(states.values())) > 1:
            out.append(f"{name}.{describe(wire, got, dm, expected)}")
    return out


def check_generated_is_current(surface: str) -> None:
    """The comparison is only meaningful if generated/ was made from the vendored schema."""
    lock = read_lock(SCHEMA_DIR)
    module = ours(surface)
    header = Path(module.__file__ or "").with_name("types.py").read_text().splitlines()[:2]
    assert header[1] == f"# schema sha256: {lock.files[SURFACES[surface]]}", (
        f"generated acp_schema.{surface} is stale ({header}); run `python -m codegen` first"
    )


def surface_context(
    surface: str, dmcg: DmcgCache, ir_modules: dict[str, ir.Module]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, ir.Definition], Any, Any]:
    """Schema, its plain object defs, our IR defs, dmcg's output and our module for one surface."""
    check_generated_is_current(surface)
    schema = load_schema(surface)
    return (
        schema,
        plain_object_defs(schema),
        ir_modules[surface].by_name(),
        dmcg.get(surface),
        ours(surface),
    )


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("surface", list(SURFACES))
def test_plain_structs_match_dmcg(
    surface: str,
    dmcg: DmcgCache,
    ir_modules: dict[str, ir.Module],
    record_property: Any,
) -> None:
    _schema, plain, ir_defs, run, module = surface_context(surface, dmcg, ir_modules)

    one_to_one, flattened, unaccounted, problems = [], [], [], []
    for name in sorted(plain):
        d = ir_defs.get(name)
        if d is None and not hasattr(module, name):
            flattened.append(name)  # used only flattened into other structs: not generated
        elif not isinstance(d, ir.StructDef):
            unaccounted.append(f"{name}: {type(d).__name__}")
        elif d.source == f"#/$defs/{name}" and d.tag_field is None:
            one_to_one.append(name)
        elif d.tag_field is not None:
            flattened.append(name)
        else:
            unaccounted.append(f"{name}: struct from {d.source}")
    assert not unaccounted, f"plain definitions with no 1:1 or variant struct: {unaccounted}"

    for name in one_to_one:
        cls = getattr(module, name)
        assert cls.__struct_config__.tag_field is None, name
        problems += disagreements(
            surface,
            name,
            struct_fields(cls),
            struct_fields(dmcg_class(run, name)),
            schema_fields(plain[name]),
        )

    record_property("structs_cross_checked", len(one_to_one))
    print(
        f"\n{surface}: {len(one_to_one)} plain structs cross-checked 1:1 against dmcg "
        f"({len(plain)} plain object $defs, {len(flattened)} flattened into other structs)"
    )
    assert len(one_to_one) >= len(plain) // 2, (
        "suspiciously few 1:1 structs: did the classifier change?"
    )
    assert not problems, "ours and dmcg disagree on plain structs:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("surface", list(SURFACES))
def test_flattened_variant_structs_match_dmcg(
    surface: str,
    dmcg: DmcgCache,
    ir_modules: dict[str, ir.Module],
    record_property: Any,
) -> None:
    """Plain payloads our generator turned into the variant struct itself (e.g. TextContent)."""
    schema, plain, ir_defs, run, module = surface_context(surface, dmcg, ir_modules)

    checked, problems = 0, []
    for name in sorted(plain):
        d = ir_defs.get(name)
        if not isinstance(d, ir.StructDef) or d.tag_field is None:
            continue
        sites = variant_sites(schema, name)
        if len(sites) != 1:
            problems.append(f"{name}: payload of {len(sites)} tagged variants, expected exactly 1")
            continue
        site = sites[0]
        cls = getattr(module, name)
        config = cls.__struct_config__
        if (config.tag_field, config.tag) != (site.tag, site.tag_value):
            problems.append(
                f"{name}: tag {config.tag_field}={config.tag!r}, schema {site.pointer} has "
                f"{site.tag}={site.tag_value!r}"
            )
        dm = struct_fields(dmcg_class(run, name))
        own = schema_fields(plain[name])
        expected = dict(own)
        dm_plus = dict(dm)
        for wire, req in site.extra.items():
            expected[wire] = expected.get(wire, False) or req
            dm_plus[wire] = dm_plus.get(wire, False) or req
        problems += disagreements(surface, name, struct_fields(cls), dm_plus, expected)
        checked += 1

    record_property("variant_structs_cross_checked", checked)
    print(f"\n{surface}: {checked} flattened variant structs cross-checked against dmcg payloads")
    assert not problems, "flattened variant structs disagree:\n  " + "\n  ".join(problems)


def test_dmcg_renames_only_meta(dmcg: DmcgCache) -> None:
    """Pins down the dmcg naming this cross-check relies on (see the module docstring)."""
    renames: set[tuple[str, str]] = set()
    for surface in SURFACES:
        run = dmcg.get(surface)
        for name in vars(run.module):
            cls = getattr(run.module, name)
            if (
                isinstance(cls, type)
                and issubclass(cls, msgspec.Struct)
                and cls is not msgspec.Struct
            ):
                renames |= {
                    (f.name, f.encode_name)
                    for f in msgspec.structs.fields(cls)
                    if f.name != f.encode_name
                }
    assert renames == {("field_meta", "_meta")}
