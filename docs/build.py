"""Build the API reference: `python docs/build.py [OUTPUT_DIR]` (what `nox -s docs` runs).

pdoc renders `acpwire` (its front door, and the public modules `acpwire.streams` and
`acpwire.testing`; the examples are in the README) and `acp_schema` (v1, v2 and their
unstable surfaces) from the docstrings into OUTPUT_DIR (default docs/_build). Any warning
pdoc emits (an annotation it cannot resolve, a module it cannot import, ...) fails the build,
and so does a public object without a docstring: a name a rendered module exports (`acpwire`'s
`__all__`; everything of `acp_schema`, its version modules and their `types`, `methods`,
`handlers` and `unstable` submodules), or a public attribute, method or property a class of that
package defines.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
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
    "acpwire.streams",
    "acpwire.testing",
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


def _configure_pdoc() -> None:
    inspect.findsource = _findsource_once_per_file  # type: ignore[assignment]
    pdoc.doc_ast._nodes_iter = _nodes_iter_through_type_checking


def build(output: Path) -> list[str]:
    """Render the reference into `output`; the problems found (none means success)."""
    _configure_pdoc()
    pdoc.render.configure(
        docformat="markdown",
        show_source=False,  # the bindings are generated: their source is on GitHub
        search=False,  # the search index of the generated modules is large and slow to build
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc(*MODULES, output_directory=output)
        missing = undocumented()
    return [f"{w.category.__name__}: {w.message}" for w in caught] + missing


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
