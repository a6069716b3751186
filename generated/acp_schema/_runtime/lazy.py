# Hand-written part of acp_schema (not generated): edit it here; codegen copies it into builds.
"""Module attributes imported on first use (PEP 562): a surface module and its `types` name
every public name, but import the module defining one only when it is first looked up, so a
program pays for the types it uses."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    module: str, where: Mapping[str, Iterable[str]], submodules: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `module`: `where` maps a module (relative to
    `module`'s package, e.g. `._types.session`; `module` is imported, it calls this) to the names it defines; `submodules` are
    submodules imported when looked up as attributes. A name, once looked up, is an ordinary
    attribute of `module` (no second look-up through `__getattr__`)."""
    home = {name: source for source, names in where.items() for name in names}
    package = sys.modules[module].__package__  # relative module names resolve against it
    nested = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        source = home.get(name)
        if source is not None:
            value = getattr(importlib.import_module(source, package), name)
        elif name in nested:
            value = importlib.import_module(f"{module}.{name}")
        else:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        setattr(sys.modules[module], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[module]), *home, *nested})

    return __getattr__, __dir__
