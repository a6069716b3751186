# Hand-written part of acp_schema (not generated): edit it here; codegen copies it into builds.
"""Module attributes imported on first use (PEP 562): a surface module and its `types` name
every public name, but import the module defining one only when it is first looked up, so a
program pays for the types it uses."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    module: str,
    where: Mapping[str, Iterable[str]],
    submodules: Iterable[str] = (),
    defined: Iterable[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The `__getattr__`, `__dir__` and `__all__` of `module` (which calls this while it is
    imported): `where` maps a module, relative to `module`'s package (`._types.session`), to
    the names it defines; `submodules` are imported when looked up as attributes; `defined` are
    the public names `module` defines itself (in `__all__` with the others). A name, once
    looked up, is an ordinary attribute of `module` (no second look-up through `__getattr__`).

    Type checkers see the names through star imports of the same modules under
    `TYPE_CHECKING`, so the generated code lists each name once (here)."""
    package = sys.modules[module].__package__ or module  # relative names resolve against it
    absolute = {source: _absolute(source, package) for source in where}
    home = {name: absolute[source] for source, names in where.items() for name in names}
    nested = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        source = home.get(name)
        if source is not None:
            value = getattr(_imported(source), name)
        elif name in nested:
            value = _imported(f"{module}.{name}")
        else:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        setattr(sys.modules[module], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[module]), *home, *nested})

    return __getattr__, __dir__, sorted([*home, *defined])


def _absolute(source: str, package: str) -> str:
    """`._types.session` in package `acp_schema.v2` -> `acp_schema.v2._types.session`."""
    dots = len(source) - len(source.lstrip("."))
    base = package.rsplit(".", dots - 1)[0] if dots > 1 else package
    return f"{base}.{source[dots:]}" if dots else source


def _imported(name: str) -> ModuleType:
    """Module `name`, imported as an `import` statement does (`importlib.import_module` does
    not: `python -X importtime` would not report what it imports)."""
    __import__(name)
    return sys.modules[name]
