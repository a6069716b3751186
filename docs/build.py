"""Build the API reference: `python docs/build.py [OUTPUT_DIR]` (what `nox -s docs` runs).

pdoc renders `acpwire` (its front door, the public packages `acpwire.agent`,
`acpwire.client`, `acpwire.errors`, `acpwire.streams`, `acpwire.testing` and `acpwire.otel`;
the examples are in the README) and `acp_schema` (v1, v2 and their unstable surfaces) from the docstrings into
OUTPUT_DIR (default docs/_build), with a search index. The build fails on:

- any warning pdoc emits (an annotation it cannot resolve, a module it cannot import, ...);
- a public object without a docstring: a name a rendered module exports (`__all__`;
  everything of `acp_schema`, its version modules and their `types`, `methods`, `handlers`
  and `unstable` submodules), or a public attribute, method or property a class of the
  package defines (or inherits from a private base class: shown as its own);
- a type of this project in a rendered signature, annotation or class header that links
  nowhere: one the reference does not render (an internal class in a public signature).

What pdoc is taught here: members of private base classes (`SessionState.apply` is
`_Fold.apply`) render as the class's own; a type alias re-exported by a package is documented
by the docstring at its definition; the bindings' unions show as their names
(`acp_schema.v2.types.SessionUpdate`, not their variants and metadata); a base class defined in
a private module links to the public module exporting it; the names acpwire's packages and
the bindings' surfaces import on first use (`acpwire._lazy`, `acp_schema._runtime.lazy`) are
rendered like the others, a generated type under its public module (`acp_schema.v2.types`,
not the `_types` area defining it).
"""

from __future__ import annotations

import ast
import functools
import html
import importlib
import inspect
import linecache
import re
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pdoc
import pdoc.doc_ast
import pdoc.render

MODULES = (
    "acpwire",
    "acpwire.agent",
    "acpwire.client",
    "acpwire.errors",
    "acpwire.streams",
    "acpwire.testing",
    "acpwire.otel",
    "acp_schema",
    "acp_schema.v1",
    "acp_schema.v2",
)
DEFAULT_OUTPUT = Path(__file__).parent / "_build"


@functools.cache
def _class_lines(filename: str) -> dict[str, int]:
    """The 0-based first line (decorators included) of every class in a file, by qualname."""
    found: dict[str, int] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                first = node.decorator_list[0] if node.decorator_list else node
                found.setdefault(prefix + node.name, first.lineno - 1)
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(node.body, f"{prefix}{node.name}.<locals>.")

    visit(ast.parse(Path(filename).read_text()).body, "")
    return found


_findsource = inspect.findsource


def _findsource_once_per_file(obj: Any) -> tuple[list[str], int]:
    """`inspect.findsource`, but a class is looked up in its file's index, parsed once.

    Before Python 3.13 every class lookup parses and walks the whole module: pdoc asks for
    each of the ~1,500 generated classes, which alone took minutes."""
    if isinstance(obj, type):
        filename = inspect.getsourcefile(obj)
        if filename is not None:
            line = _class_lines(filename).get(obj.__qualname__)
            if line is not None:
                return linecache.getlines(filename), line
    return _findsource(obj)


_nodes_iter = pdoc.doc_ast._nodes_iter


def _nodes_iter_through_type_checking(tree: ast.Module | ast.ClassDef) -> Iterator[ast.AST]:
    """pdoc's statements of a module or class, with `if TYPE_CHECKING: X: TypeAlias = ...
    else: X = ...` blocks inlined, so the docstring after such a block documents `X`.

    The bindings define every open union and open enum that way (the annotation type checkers
    see, then what msgspec decodes); pdoc alone reads no docstring after an `if` block."""
    for node in _nodes_iter(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            yield from node.body
            yield from node.orelse
        else:
            yield node


def _private(cls: pdoc.doc.Class, base: tuple[str, str]) -> bool:
    """Whether `base` (module, qualname) is a private class of `cls`'s own package."""
    module, qualname = base
    return qualname.startswith("_") and module.split(".")[0] == cls.modulename.split(".")[0]


_own_members = pdoc.doc.Class.own_members.func  # type: ignore[attr-defined]


def _own_members_with_private_bases(cls: pdoc.doc.Class) -> list[pdoc.doc.Doc[Any]]:
    """A class's own members, plus what it inherits from private base classes of its package
    (`SessionState.apply` is `_Fold.apply`): the reader cannot follow a link to a class
    the reference does not render, so those members are shown as the class's own."""
    members: list[pdoc.doc.Doc[Any]] = list(_own_members(cls))
    for base, inherited in cls._members_by_origin.items():
        if _private(cls, base) and base != (cls.modulename, cls.qualname):
            members += [m for m in inherited if m.name not in {o.name for o in members}]
    return members


_bases = pdoc.doc.Class.bases.func  # type: ignore[attr-defined]


@functools.cache
def _rendered_modules() -> tuple[str, ...]:
    """The names of the modules the reference renders: `MODULES` and their public submodules."""
    return tuple(
        rendered.modulename
        for module in MODULES
        for rendered in _with_submodules(pdoc.doc.Module.from_name(module))
    )


def _exported_as(module: str, qualname: str) -> tuple[str, str]:
    """Where the reference shows a class: where it is defined when that module is rendered,
    else the first rendered module exporting it (`acp_schema.MethodMessage`)."""
    if module in _rendered_modules() or "." in qualname:
        return module, qualname
    obj = getattr(importlib.import_module(module), qualname, None)
    for rendered in _rendered_modules():
        if obj is not None and getattr(sys.modules[rendered], qualname, None) is obj:
            return rendered, qualname
    return module, qualname


def _public_bases(cls: pdoc.doc.Class) -> list[tuple[str, str, str]]:
    """The base classes shown in a class's header, linked where the reference shows them;
    private ones left out (`_own_members_with_private_bases` shows their members as the
    class's own)."""
    shown = []
    for module, qualname, text in _bases(cls):
        if _private(cls, (module, qualname)):
            continue
        public = _exported_as(module, qualname)
        if public != (module, qualname):
            text = text.replace(f"{module}.{qualname}", ".".join(public), 1)
        shown.append((*public, text))
    return shown


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a module body, those inside its `if` blocks included (the bindings'
    surfaces import their names under `if TYPE_CHECKING:`, the interpreter on first use)."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _module_level(node.body)
            yield from _module_level(node.orelse)


@functools.cache
def _imported_docstrings(modulename: str) -> dict[str, str]:
    """The docstrings of the module-level names `modulename` defines or imports from a module
    of its own package (`from .permissions import Decision`, `from .types import *`), followed
    to the definition.

    pdoc reads a variable's docstring only in the module it is rendered in, so a type alias
    (which has no `__doc__` of its own) re-exported by a package would render undocumented."""
    module = importlib.import_module(modulename)
    docstrings = dict(pdoc.doc_ast.walk_tree(module).var_docstrings)
    package = modulename if hasattr(module, "__path__") else modulename.rpartition(".")[0]
    source = inspect.getsource(module)
    for node in _module_level(ast.parse(source).body):
        if not isinstance(node, ast.ImportFrom) or not node.level or node.module is None:
            continue  # absolute, or `from . import submodule`
        base = package
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        origin = f"{base}.{node.module}"
        found = _imported_docstrings(origin)
        for alias in node.names:
            if alias.name == "*":  # what the origin exports (a surface's names, by module)
                for name in set(importlib.import_module(origin).__all__) & found.keys():
                    docstrings.setdefault(name, found[name])
            elif alias.name in found:
                docstrings.setdefault(alias.asname or alias.name, found[alias.name])
    return docstrings


_signature = pdoc.doc.Function.signature.func  # type: ignore[attr-defined]


def _signature_in_a_module(function: pdoc.doc.Function) -> inspect.Signature:
    """pdoc resolves a signature's annotations in the function's module; a NamedTuple's
    generated `__new__` belongs to none (`namedtuple_<Name>`), so it gets its class's."""
    obj = function.obj
    if (getattr(obj, "__module__", None) or "").startswith("namedtuple_"):
        owner = sys.modules[function.modulename]
        for name in function.qualname.split(".")[:-1]:
            owner = getattr(owner, name)
        obj.__module__ = owner.__module__
    return _signature(function)  # type: ignore[no-any-return]


UNION_INFO = re.compile(r", UnionInfo\(name='(\w+)'")
# a generated type by the module defining it: a surface's `types`, or one of its `_types` areas
BINDINGS_NAME = re.compile(r"\b(acp_schema\.v\d+(?:\.unstable)?)\.(?:types|_types\.\w+)\.\w+")
AREA_NAME = re.compile(r"\b(acp_schema\.v\d+(?:\.unstable)?)\._types\.\w+\.(\w+)")


def _closing_bracket(text: str, start: int) -> int:
    """The index of the `]` closing the `[` at `start`."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "[":
            depth += 1
        elif text[index] == "]":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _named_unions(text: str) -> str:
    """An annotation's text with every generated union written as its name, and every
    generated type by its public module.

    The bindings' unions are `Annotated[Union[<variants>], UnionInfo(name=...)]` at run time,
    so a signature taking a `v2.SessionUpdate` would show its twenty variants and the
    union's metadata: `acp_schema.v2.types.SessionUpdate` is what the code says. A type is
    defined in an area module (`acp_schema.v2._types.session.PromptRequest`) and documented
    where users import it from (`acp_schema.v2.types.PromptRequest`)."""
    for opening in ("typing.Annotated[", "Annotated["):
        start = text.find(opening)
        while start != -1:
            end = _closing_bracket(text, start + len(opening) - 1)
            inner = text[start:end]
            name, module = UNION_INFO.search(inner), BINDINGS_NAME.search(inner)
            if end != -1 and name and module:
                replacement = f"{module.group(1)}.types.{name.group(1)}"
                if hasattr(importlib.import_module(f"{module.group(1)}.types"), name.group(1)):
                    text = text[:start] + replacement + text[end + 1 :]
                    end = start + len(replacement) - 1
            start = text.find(opening, end + 1 if end != -1 else start + 1)
    return AREA_NAME.sub(r"\1.types.\2", text)


def _with_named_unions(clean: Any) -> Any:
    """One of pdoc's clean-ups of a formatted annotation, followed by `_named_unions`."""
    return lambda text: _named_unions(clean(text))


def _module_var_docstrings(module: pdoc.doc.Module) -> dict[str, str]:
    if sys.modules.get(module.modulename) is not module.obj:  # the search index's own
        return pdoc.doc_ast.walk_tree(module.obj).var_docstrings
    return _imported_docstrings(module.modulename)


def _undocumented(namespace: pdoc.doc.Namespace[Any], package: str, top: bool) -> list[str]:
    """Public members without a docstring: every name a module exports, and what the classes
    of `package` define themselves (not what they inherit, e.g. from Exception)."""
    missing = []
    for member in namespace.own_members:
        if member.name.startswith("_"):
            continue
        ours = member.taken_from[0].split(".")[0] == package
        if (top or ours) and not member.docstring.strip():
            missing.append(f"{member.fullname} has no docstring")
        if isinstance(member, pdoc.doc.Class) and ours:
            missing += _undocumented(member, package, top=False)
    return missing


def undocumented_in(module: str) -> list[str]:
    """What `module` (one of `MODULES`) and its public submodules leave undocumented."""
    _configure_pdoc()
    package = module.split(".")[0]
    return [
        problem
        for namespace in _with_submodules(pdoc.doc.Module.from_name(module))
        for problem in _undocumented(namespace, package, top=True)
    ]


def _with_submodules(module: pdoc.doc.Module) -> Iterator[pdoc.doc.Module]:
    yield module
    for submodule in module.submodules:
        yield from _with_submodules(submodule)


def undocumented() -> list[str]:
    """What the reference leaves undocumented: in `acpwire` (its front door) and `acp_schema`."""
    return [problem for module in MODULES for problem in undocumented_in(module)]


def _import_names_used_on_first_use() -> None:
    """pdoc reads the names a module exports from its `__dict__`: the ones acpwire's packages
    (`acpwire._lazy`) and the bindings' surfaces and their `types` (`acp_schema._runtime.lazy`)
    import on first use are imported first, as a user's first use would."""
    import acp_schema

    surfaces = [
        f"acp_schema.{label}{part}"
        for label in acp_schema.SCHEMA_RELEASES
        for part in ("", ".types")
    ]
    for name in (*MODULES, *surfaces):
        module = importlib.import_module(name)
        for exported in getattr(module, "__all__", ()):
            getattr(module, exported)


def _configure_pdoc() -> None:
    _import_names_used_on_first_use()
    inspect.findsource = _findsource_once_per_file  # type: ignore[assignment]
    pdoc.doc_ast._nodes_iter = _nodes_iter_through_type_checking
    if not hasattr(pdoc.doc, "_unions_named"):  # once: each wraps the one before
        pdoc.doc._unions_named = True
        for clean in ("_remove_collections_abc", "_remove_memory_addresses"):
            setattr(pdoc.doc, clean, _with_named_unions(getattr(pdoc.doc, clean)))
    for cls, name, replacement in (
        (pdoc.doc.Class, "own_members", _own_members_with_private_bases),
        (pdoc.doc.Class, "bases", _public_bases),
        (pdoc.doc.Module, "_var_docstrings", _module_var_docstrings),
        (pdoc.doc.Function, "signature", _signature_in_a_module),
    ):
        prop = functools.cached_property(replacement)
        prop.__set_name__(cls, name)
        setattr(cls, name, prop)


OUR_PACKAGES = tuple(sorted({module.split(".")[0] for module in MODULES}))
DECLARATION = re.compile(
    r'id="([\w.]+)"[^>]*>\s*<div class="attr \w+">(.*?)<a class="headerlink"', re.S
)
DOTTED = re.compile(r'</span><span class="o">\.</span><span class="n">')
LINK = re.compile(r"<a [^>]*>.*?</a>", re.S)
OUR_NAME = re.compile(rf"(?<![\w.])((?:{'|'.join(OUR_PACKAGES)})(?:\.\w+)+)")


def unlinked(output: Path) -> list[str]:
    """Names of this project's in the rendered signatures and annotations that link nowhere:
    a type the reference does not render (an internal class in a public signature), or one
    no rendered module exports."""
    problems = []
    for page in sorted(output.rglob("*.html")):
        for member, declaration in DECLARATION.findall(page.read_text()):
            text = html.unescape(re.sub(r"<[^>]+>", "", LINK.sub("", DOTTED.sub(".", declaration))))
            for name in OUR_NAME.findall(text):
                where = page.relative_to(output).with_suffix("").as_posix().replace("/", ".")
                problems.append(f"{where}.{member}: {name} is not linked (not rendered)")
    return problems


def build(output: Path) -> list[str]:
    """Render the reference into `output`; the problems found (none means success)."""
    _configure_pdoc()
    pdoc.render.configure(
        docformat="markdown",
        show_source=False,  # the bindings are generated: their source is on GitHub
        search=True,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc(*MODULES, output_directory=output)
        missing = undocumented()
    return [f"{w.category.__name__}: {w.message}" for w in caught] + missing + unlinked(output)


def main(argv: list[str]) -> int:
    output = Path(argv[0]) if argv else DEFAULT_OUTPUT
    problems = build(output)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"docs: {len(problems)} problem(s); warnings are errors", file=sys.stderr)
        return 1
    print(f"docs: API reference in {output}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
