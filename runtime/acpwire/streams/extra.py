"""The optional `remote` extra (httpx with HTTP/2, httpx-ws; Hypercorn to serve): imported only
when a remote transport is used, with an error naming the install command when it is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

INSTALL = "pip install 'acpwire[remote]'"


def remote_module(name: str, feature: str) -> ModuleType:
    """Import `name` (an acpwire module built on the extra, or the extra's library itself);
    ModuleNotFoundError naming `INSTALL` when a library of the extra is missing."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] == "acpwire":
            raise
        raise ModuleNotFoundError(
            f"{feature} needs the `remote` extra of acpwire, which is not installed "
            f"(no module named {exc.name!r}): {INSTALL}",
            name=exc.name,
        ) from exc
