"""IR -> generated/acp_schema: jinja2 templates, then ruff format for stable, readable output."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import jinja2

from . import ir
from .areas import area_order, assign, references
from .lookalikes import lookalike_note
from .naming import camel_case, constant_name, snake_case
from .render import TypeRenderer, docstring, literal, oneline

TEMPLATES = Path(__file__).parent / "templates"
# The type of the `_meta` field most structs have: documented once, on this alias, instead of
# on every field (a `_meta` field with a different description keeps its own).
METADATA = "Metadata"
METADATA_TYPE = "dict[str, Any]"
# The markers of an open enum's values by its base (acp_schema._runtime.schema).
OPEN_LITERAL = {"str": "OpenLiteral", "int": "OpenIntLiteral"}
HANDLER_SIDES = ("agent", "client")  # sides with handler base classes and peer proxies
# The hand-written subpackage of acp_schema (generated/acp_schema/_runtime): the generator never
# writes or deletes it; `copy_runtime` puts it into packages generated elsewhere.
RUNTIME = "_runtime"
RUNTIME_SOURCE = Path(__file__).resolve().parent.parent / "generated" / "acp_schema" / RUNTIME
# The leniency a field has when its struct's `__acp_lenient__` does not name it, by wire name:
# the runtime's rule (acp_schema._runtime.schema.LENIENT_BY_DEFAULT), so a struct lists only
# the fields that differ from it.
LENIENT_BY_DEFAULT = {"_meta": ir.Leniency(default_on_error=True)}


@dataclass(frozen=True)
class FieldView:
    attr: str
    declaration: str  # the annotation and default, e.g. `str | UnsetType = UNSET`
    doc: str


@dataclass(frozen=True)
class StructView:
    name: str
    bases: str
    doc: str
    fields: list[FieldView]
    lenient: list[tuple[str, str]]
    checks: list[str]


@dataclass(frozen=True)
class MethodView:
    name: str
    side: str
    kind: str
    params: str | None
    result: str | None
    doc: str
    message_class: str

    @property
    def handler(self) -> str:
        """The handler method name: `session/prompt` -> `session_prompt`."""
        return snake_case(self.name.replace("/", "_").replace("$", ""))

    @property
    def spec_const(self) -> str:
        """`SessionPromptMessage` -> `SESSION_PROMPT`: the method's typed MethodSpec."""
        return snake_case(self.message_class.removesuffix("Message")).upper()


def message_class(method: str, side: str | None = None) -> str:
    """`session/update` -> `SessionUpdateMessage`; `$/cancel_request` -> `CancelRequestMessage`.

    A method name both sides handle (with different params) gets the side: `McpMessageAgentMessage`.
    """
    base = camel_case(method.replace("/", "_").replace("$", ""))
    return base + (camel_case(side) if side else "") + "Message"


@dataclass(frozen=True)
class UnionView:
    name: str
    doc: str
    static: str  # the annotation type checkers see: every member, unknown variant included
    runtime: str  # what msgspec decodes, with the fallback rules attached (== static: plain)
    # (private name, `Union[...]`) of the tagged variants, when both annotations use them
    variants: tuple[str, str] | None = None


def _leniency_flags(leniency: ir.Leniency) -> str:
    flags = [
        name
        for name, on in (
            ("ON_ERROR", leniency.default_on_error),
            ("ON_NULL", leniency.default_on_null),
            ("SKIP_INVALID", leniency.skip_invalid_items),
        )
        if on
    ]
    return " | ".join(flags) or "0"


def _lenient_entries(s: ir.StructDef) -> list[tuple[str, str]]:
    """The `__acp_lenient__` entries of a struct: its fields whose leniency is not the default."""
    return [
        (f.attr, _leniency_flags(f.leniency))
        for f in s.fields
        if f.leniency != LENIENT_BY_DEFAULT.get(f.wire, ir.Leniency())
    ]


def _field_doc(f: ir.Field) -> str:
    doc = f.doc
    if f.three_state:
        doc += "\n\nThree-state patch field: UNSET leaves the value unchanged, None clears it."
    if f.default_json is not None and f.default_json != {}:
        doc += f"\n\nSchema default: `{f.default_json!r}` (applies when UNSET)."
    return docstring(doc if doc.strip() else f"The `{f.wire}` field.", "    ")


class ModuleEmitter:
    def __init__(self, module: ir.Module, env: jinja2.Environment) -> None:
        self.module = module
        self.env = env
        self.defs = module.by_name()
        self.types = TypeRenderer(self.defs)
        meta_docs = Counter(f.doc for s in module.structs for f in s.fields if f.wire == "_meta")
        self.meta_doc = meta_docs.most_common(1)[0][0] if meta_docs else None
        if self.meta_doc is not None and METADATA in self.defs:
            raise ValueError(f"the schema defines {METADATA!r}, the name of the `_meta` alias")

    def header(self) -> dict[str, str]:
        m = self.module
        return {
            "source": m.source,
            "sha256": m.sha256,
            "title": f"ACP {m.version}{' (unstable)' if m.unstable else ''}",
            "version": m.version,
            "label": _label(m),
        }

    # --------------------------------------------------------------- types.py

    def _field(self, f: ir.Field) -> FieldView:
        annotation = self.types.annotation(f.type)
        doc = _field_doc(f)
        if f.wire == "_meta" and f.doc == self.meta_doc and annotation.startswith(METADATA_TYPE):
            annotation = METADATA + annotation.removeprefix(METADATA_TYPE)
            doc = docstring(f"The `_meta` object (see `{METADATA}`).", "    ")
        named = f.attr != f.wire
        if f.required:
            default = f" = msgspec.field(name={literal(f.wire)})" if named else ""
            decl = f"{annotation}{default}"
        else:
            default = f"msgspec.field(default=UNSET, name={literal(f.wire)})" if named else "UNSET"
            decl = f"{annotation} | UnsetType = {default}"
        return FieldView(f.attr, decl, doc)

    def _struct(self, s: ir.StructDef) -> StructView:
        bases = "msgspec.Struct, kw_only=True, gc=False"
        if s.tag_field is not None:
            bases += f", tag_field={literal(s.tag_field)}, tag={literal(s.tag_value)}"
        lenient = _lenient_entries(s)
        checks = []
        for check in s.merged:
            alternatives = ", ".join(
                f"({literal(alt.when_tag)}, ({''.join(literal(a) + ', ' for a in alt.required_attrs)}))"
                for alt in check.alternatives
                if alt.required_attrs or check.tag_attr is None
            )
            if alternatives:
                exclusive = ", exclusive=True" if check.exclusive else ""
                checks.append(
                    f"check_alternatives(self, {literal(check.tag_attr)}, ({alternatives},)"
                    f"{exclusive})"
                )
        return StructView(
            s.name,
            bases,
            docstring(self._struct_doc(s), "    "),
            [self._field(f) for f in s.fields],
            lenient,
            checks,
        )

    def _struct_doc(self, s: ir.StructDef) -> str:
        doc = s.doc or s.name
        note = lookalike_note(s.name, self.defs)
        return doc if note is None else f"{doc.rstrip()}\n\n{note}"

    def _union(self, u: ir.UnionDef) -> UnionView:
        all_members = [self.types.annotation(m) for m in u.members]
        if u.unknown is not None:
            all_members.append(u.unknown.name)
        doc = docstring(u.doc or "One of " + ", ".join(f"`{m}`" for m in all_members) + ".")
        native = [self.types.annotation(m) for m in self.types.native_members(u)]
        if len(native) == len(u.members) and u.unknown is None and u.tag_field is None:
            plain = f"Union[{', '.join(all_members)}]"
            return UnionView(u.name, doc, plain, plain)
        # the tagged variants lead both member lists: written once, as a private alias
        variants = None
        if len(u.variants) > 1:
            variants = (f"_{u.name}Variants", f"Union[{', '.join(u.variants)}]")
            shared = len(u.variants)
            all_members[:shared] = native[:shared] = [variants[0]]
        alternatives = "".join(self.types.annotation(m) + ", " for m in u.untagged)
        defaults = ", ".join(f"{literal(title)}: {v}" for title, v in u.named_defaults)
        info = (
            f"UnionInfo({literal(u.name)}, {literal(u.tag_field)}, ({alternatives}), "
            f"{u.unknown.name if u.unknown else None}" + (f", {{{defaults}}})" if defaults else ")")
        )
        if len(u.variants) == 1:
            # msgspec makes the tag of a lone tagged struct optional; a second member makes it required.
            native.append(f"tag_guard({literal(u.tag_field)})")
        static = all_members[0] if len(all_members) == 1 else f"Union[{', '.join(all_members)}]"
        inner = native[0] if len(native) == 1 else f"Union[{', '.join(native)}]"
        return UnionView(u.name, doc, static, f"Annotated[{inner}, {info}]", variants)

    def render_types(self) -> dict[str, str]:
        """types.py (every name, each imported from its area when first used, by the surface
        module's table), the `_types` package and one module per area (codegen/areas.py), by
        path under the surface."""
        areas = assign(self.module)
        header = self.header()
        files = {
            "types.py": self.env.get_template("types.py.j2").render(
                sources=[source for source, _ in self.type_sources(areas)], **header
            ),
            "_types/__init__.py": self.env.get_template("types_package.py.j2").render(
                metadata=self._metadata(), **header
            ),
        }
        for area in area_order(self.module, areas):
            files[f"_types/{area}.py"] = self._render_area(area, areas)
        return files

    def type_sources(self, areas: dict[str, str]) -> list[tuple[str, list[str]]]:
        """(module relative to the surface, the type names it defines), by module."""
        by_area: dict[str, list[str]] = {}
        if self.meta_doc is not None:
            by_area["._types"] = [METADATA]  # the `_types` package itself
        for d in self.module.definitions:
            by_area.setdefault(f"._types.{areas[d.name]}", []).extend(_defined(d))
        return [(source, sorted(by_area[source])) for source in sorted(by_area)]

    def own_sources(self) -> list[tuple[str, list[str]]]:
        """The public names of the surface module that are not types, by the module (relative
        to it) defining them: what its `__getattr__` imports when a name is first used."""
        exported = self.exported()
        return [
            *([("._surface", ["SURFACE"])] if self.surface() is not None else []),
            (".handlers", sorted(exported["handlers"])),
            (".methods", sorted(exported["methods"])),
        ]

    def _metadata(self) -> tuple[str, str, str] | None:
        if self.meta_doc is None:
            return None
        doc = "The `_meta` object of the structs that have a `meta` field:\n\n" + self.meta_doc
        return (METADATA, METADATA_TYPE, docstring(doc, ""))

    def _render_area(self, area: str, areas: dict[str, str]) -> str:
        definitions = [d for d in self.module.definitions if areas[d.name] == area]
        imports: dict[str, set[str]] = {}
        for d in definitions:
            for ref in references(d):
                if areas[ref] != area:
                    imports.setdefault(areas[ref], set()).add(ref)
        items: list[tuple[str, object]] = []
        for d in definitions:
            if isinstance(d, ir.StructDef):
                items.append(("struct", self._struct(d)))
            elif isinstance(d, ir.UnionDef):
                if d.unknown is not None:
                    items.append(
                        ("unknown", (d.unknown, d.tag_field, docstring(d.unknown.doc, "    ")))
                    )
                items.append(("union", self._union(d)))
            elif isinstance(d, ir.EnumDef):
                items.append(("enum", self._enum(d)))
            else:
                target = self.types.annotation(d.target)
                doc = docstring(d.doc or f"`{target}` on the wire.")
                items.append(("alias", (d.name, target, doc)))
        return self.env.get_template("types_area.py.j2").render(
            items=items,
            names=sorted(name for d in definitions for name in _defined(d)),
            metadata=METADATA if self.meta_doc is not None else None,
            imports=sorted((a, sorted(names)) for a, names in imports.items()),
            area=area,
            **self.header(),
        )

    def _enum(self, e: ir.EnumDef) -> dict[str, object]:
        values = ", ".join(literal(v.value) for v in e.values)
        annotation = f"Literal[{values}]"
        # Open enums: type checkers see `Literal[...] | str`; msgspec decodes the closed Literal
        # (its values are shared strings, no allocation) and the fallback path takes the rest.
        if e.open:
            annotation = f"{OPEN_LITERAL[e.base]}[{annotation}]"
        doc = e.doc + "".join(
            f"\n\n- `{v.value}`: {v.doc}" if v.doc else f"\n\n- `{v.value}`" for v in e.values
        )
        constants = (
            [
                (
                    constant_name(v.value, v.title),
                    literal(v.value),
                    docstring(f"`{v.value}`" + (f": {v.doc}" if v.doc else "."), "    "),
                )
                for v in e.values
            ]
            if e.base == "int"
            else []
        )
        return {
            "name": e.name,
            "annotation": annotation,
            "doc": docstring(doc, ""),
            "constants": constants,
        }

    # --------------------------------------------------------------- methods.py

    def _methods(self) -> tuple[list[MethodView], list[str]]:
        """The method views in table order, and the names more than one side handles."""
        ordered = sorted(self.module.methods, key=lambda m: (m.side, m.name))
        names = Counter(m.name for m in ordered)
        ambiguous = sorted(n for n, count in names.items() if count > 1)
        methods = [
            MethodView(
                m.name,
                m.side,
                m.kind,
                m.params,
                m.result,
                m.doc,
                message_class(m.name, m.side if m.name in ambiguous else None),
            )
            for m in ordered
        ]
        return methods, ambiguous

    def render_methods(self) -> dict[str, str]:
        """methods.py (tables, message classes, codecs) and handlers.py (base classes, peers)."""
        methods, ambiguous = self._methods()
        clashes = {m.message_class for m in methods} & set(self.defs)
        if clashes:
            raise ValueError(f"message class names clash with schema types: {sorted(clashes)}")
        sides = sorted({m.side for m in methods})
        used = sorted(
            {n for m in methods for n in (m.params, m.result) if n is not None} | {"Error"}
        )
        context = {"methods": methods, "sides": sides, "ambiguous": ambiguous, "used": used}
        handler_sides = [s for s in sides if s in HANDLER_SIDES]
        return {
            "methods.py": self.env.get_template("methods.py.j2").render(
                **context, exported=self.exported()["methods"], docstring=docstring, **self.header()
            ),
            "handlers.py": self.env.get_template("handlers.py.j2").render(
                **{**context, "sides": handler_sides},
                exported=self.exported()["handlers"],
                docstring=docstring,
                **self.header(),
            ),
        }

    def exported(self) -> dict[str, list[str]]:
        """The `__all__` of methods.py and handlers.py."""
        methods, _ = self._methods()
        sides = sorted({m.side for m in methods})
        codecs = ["AGENT_CODEC", "CLIENT_CODEC"] if {"agent", "client"} <= set(sides) else []
        tables = ["AMBIGUOUS_METHODS", "ERROR_CODEC", "MESSAGE_CODEC", "METHODS"]
        rows = [name for m in methods for name in (m.message_class, m.spec_const)]
        side_tables = [f"{side.upper()}_METHODS" for side in sides]
        handlers = [
            f"{side.capitalize()}{kind}"
            for side in sides
            if side in HANDLER_SIDES
            for kind in ("Base", "Peer")
        ]
        return {
            "methods": [*codecs, *tables, *rows, *side_tables, "decode_message", "encode_message"],
            "handlers": handlers,
        }

    # --------------------------------------------------------------- __init__.py

    def surface(self) -> dict[str, str] | None:
        """The names the module's `SURFACE` is built from; None for a module that is not a
        whole ACP surface (no agent and client sides, `initialize`, or a `session/update`
        notification carrying a tagged `update` union)."""
        methods, _ = self._methods()
        sides = {m.side for m in methods}
        row = {(m.side, m.name): m for m in methods}
        initialize = row.get(("agent", "initialize"))
        update = row.get(("client", "session/update"))
        if not {"agent", "client"} <= sides or initialize is None or update is None:
            return None
        params = self.defs.get(update.params or "")
        union = next(
            (
                self.defs.get(f.type.name)
                for f in (params.fields if isinstance(params, ir.StructDef) else ())
                if f.wire == "update" and isinstance(f.type, ir.Ref)
            ),
            None,
        )
        if not isinstance(union, ir.UnionDef) or not union.tag_field:
            return None
        return {
            "initialize": initialize.spec_const,
            "session_update": update.spec_const,
            "session_update_union": union.name,
            "protocol_methods": "_methods.PROTOCOL_METHODS" if "protocol" in sides else "{}",
            "proxy_methods": "_methods.PROXY_METHODS" if "proxy" in sides else "{}",
        }


def _defined(d: ir.Definition) -> list[str]:
    """The public names the generated code of `d` defines: its own, its union's unknown
    variant, its int enum's `Values` class."""
    names = [d.name]
    if isinstance(d, ir.UnionDef) and d.unknown is not None:
        names.append(d.unknown.name)
    if isinstance(d, ir.EnumDef) and d.base == "int":
        names.append(f"{d.name}Values")
    return names


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # Python source, not HTML; schema text goes through render.py
    )
    env.filters["py"] = literal
    env.filters["oneline"] = oneline
    return env


def _label(module: ir.Module) -> str:
    """`v2.unstable`: the module under acp_schema."""
    return module.version + (".unstable" if module.unstable else "")


def package_dir(out: Path, module: ir.Module) -> Path:
    return out / module.version / ("unstable" if module.unstable else "")


def emit(modules: list[ir.Module], out: Path, *, version: str) -> list[Path]:
    """Write the acp_schema package for `modules` under `out` (the acp_schema directory);
    `version` is its `__version__` (codegen.release.schema_package_version)."""
    env = _environment()
    _remove_generated(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def write(path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)

    emitters = [ModuleEmitter(module, env) for module in modules]
    write(out / "py.typed", "")
    write(
        out / "__init__.py",
        env.get_template("package.py.j2").render(
            modules=modules,
            version=version,
            surfaces=[
                {
                    "version": e.module.version,
                    "unstable": e.module.unstable,
                    "label": _label(e.module),
                }
                for e in emitters
                if e.surface() is not None
            ],
        ),
    )
    for emitter in emitters:
        module = emitter.module
        pkg = package_dir(out, module)
        types = emitter.render_types()
        for filename, text in {**types, **emitter.render_methods()}.items():
            write(pkg / filename, text)
        surface = emitter.surface()
        label = {"unstable": module.unstable}
        if surface is not None:
            write(
                pkg / "_surface.py",
                env.get_template("surface.py.j2").render(
                    **emitter.header(), **label, surface=surface
                ),
            )
        write(
            pkg / "__init__.py",
            env.get_template("version_init.py.j2").render(
                **emitter.header(),
                **label,
                surface=surface,
                own=emitter.own_sources(),
                types=emitter.type_sources(assign(module)),
                has_unstable=any(m.version == module.version and m.unstable for m in modules),
            ),
        )
    _format([p for p in written if p.suffix == ".py"])
    return written


def _remove_generated(out: Path) -> None:
    """Everything in `out` but the hand-written RUNTIME: no stale generated file survives."""
    if not out.exists():
        return
    for entry in out.iterdir():
        if entry.name == RUNTIME:
            continue
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def copy_runtime(out: Path) -> None:
    """Make the package generated into `out` complete: a copy of the hand-written RUNTIME
    (nothing to do for the development package itself, where it lives)."""
    target = out / RUNTIME
    if target.exists() and target.samefile(RUNTIME_SOURCE):
        return
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(RUNTIME_SOURCE, target, ignore=shutil.ignore_patterns("__pycache__"))


def _format(paths: list[Path]) -> None:
    config = Path(__file__).resolve().parent.parent / "pyproject.toml"
    cmd = [sys.executable, "-m", "ruff", "format", "--quiet", "--config", str(config)]
    subprocess.run([*cmd, *map(str, paths)], check=True)
