"""The modules of acpwire 0.1 that moved in 0.2, importable under their old names for one
release: importing one warns (DeprecationWarning) and gives a module whose attributes are read
from the new one. Renamed names keep their old name there too.

`install()` puts the finder on `sys.meta_path`; `acpwire/__init__.py` calls it.

Names renamed inside a package that stayed (`acpwire.client.V2Connection` ->
`acpwire.client.Negotiated`) resolve through the package's `__getattr__` (`_lazy.exports`),
which asks `renamed_name`: the old name warns once per use and gives the new object.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importlib.abc costs an import of importlib.resources at start-up
    from importlib.abc import Loader, MetaPathFinder

    class _FinderBase(MetaPathFinder, Loader): ...

else:
    _FinderBase = object

MOVED: dict[str, tuple[str, ...]] = {
    "acpwire.lifecycle": ("acpwire.agent", "acpwire.agent.turns", "acpwire.agent.schedulers"),
    "acpwire.capabilities": ("acpwire.agent", "acpwire.agent.capabilities"),
    "acpwire.diffs": ("acpwire.agent", "acpwire.agent.diffs"),
    "acpwire.sessions": ("acpwire.agent", "acpwire.agent.sessions"),
    "acpwire.session": ("acpwire.client", "acpwire.client.state"),
    "acpwire.permissions": ("acpwire.client", "acpwire.client.permissions"),
    "acpwire.turns": ("acpwire.client", "acpwire.client.turns"),
    "acpwire.resume": ("acpwire.client", "acpwire.client.opening"),
    "acpwire.transport": (
        "acpwire.streams",
        "acpwire.streams.agent_process",
        "acpwire.streams.stdio",
        "acpwire.errors",
    ),
}
"""Old module -> the public package its names are imported from now (named in the warning),
then the modules its other names went to."""

RENAMED: dict[tuple[str, str], str] = {
    ("acpwire.turns", "Turn"): "TurnEvents",
    ("acpwire.turns", "V2Turn"): "TurnEvents",
    ("acpwire.turns", "V1Turn"): "V1TurnEvents",
}
"""(old module, old name) -> the name in the new module."""


class _MovedModule(ModuleType):
    def __getattr__(self, name: str) -> object:
        old = self.__name__
        new_name = RENAMED.get((old, name), name)
        for new in MOVED[old]:
            module = importlib.import_module(new)
            if hasattr(module, new_name):
                return getattr(module, new_name)
        raise AttributeError(f"module {old!r} (now {MOVED[old][0]}) has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        return sorted(
            {n for new in MOVED[self.__name__] for n in dir(importlib.import_module(new))}
        )


class _Finder(_FinderBase):
    """The meta path finder and loader of the old module names (the protocols, duck-typed)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return _MovedModule(spec.name)

    def exec_module(self, module: ModuleType) -> None:
        warnings.warn(
            f"{module.__name__} moved in acpwire 0.2: import from {MOVED[module.__name__][0]} "
            "(or from acpwire itself); the old module goes away in the next release",
            DeprecationWarning,
            stacklevel=2,
        )


_FINDER = _Finder()


def install() -> None:
    """Make the old module names importable (once)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)


def renamed_name(module: str, renamed: Mapping[str, str], name: str) -> object:
    """What a package's `__getattr__` (`_lazy.exports`) gives for a name `module` does not have:
    an old name (a key of `renamed`) warns (DeprecationWarning, naming the new one, at the
    line that used it) and gives the object now called by its value; any other name raises
    AttributeError."""
    new = renamed.get(name)
    if new is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warnings.warn(
        f"{module}.{name} is called {module}.{new} since acpwire 0.2; the old name goes "
        "away in the next release",
        DeprecationWarning,
        stacklevel=3,  # the user's line, above this and the package's __getattr__
    )
    return getattr(sys.modules[module], new)
