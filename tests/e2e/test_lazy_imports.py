"""`import acpwire` pays only for what a program uses (issue 18, cold start): serving or
connecting over the network and the durable session stores are imported on first use of
their names (`acpwire._lazy.ON_FIRST_USE`), which still resolve from every package exporting
them, as the same objects, for type checkers too."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import warnings
from pathlib import Path

import pytest

import acpwire
import acpwire.agent
from acpwire._lazy import ON_FIRST_USE
from helpers.processes import last_line_of

PACKAGES = ("acpwire", "acpwire.agent", "acpwire.client", "acpwire.streams")
"""The packages exporting names imported on first use."""

NOT_IMPORTED = (
    *("acpwire.agent.remote", "acpwire.agent.stores", "acpwire.client.remote"),
    *("hmac", "hashlib", "ipaddress", "sqlite3", "shutil", "bz2", "lzma"),
)
"""What `import acpwire` (and its public packages) used to import for the remote transports,
the durable stores and `shutil.which`, though most programs never use them."""

LAZY = [(package, name) for package in PACKAGES for name in ON_FIRST_USE]
LAZY = [(p, n) for p, n in LAZY if n in importlib.import_module(p).__all__]


def test_importing_acpwire_imports_neither_the_remote_modules_nor_the_stores() -> None:
    program = (
        "import asyncio, sys\nimport acpwire, acpwire.agent, acpwire.client, acpwire.streams\n"
        f"print(sorted(m for m in {NOT_IMPORTED!r} if m in sys.modules))"
    )
    assert last_line_of(program) == "[]"


def test_an_agent_importing_acpwire_imports_no_client() -> None:
    """`acpwire` exports the client side (`rest_from=_lazy.CLIENT`) without importing it."""
    program = (
        "import sys\nimport acpwire, acpwire.agent, acpwire.streams\n"
        "from acpwire import PromptTurns, serve_agent\n"
        "print(sorted(m for m in sys.modules if m.startswith('acpwire.client')))"
    )
    assert last_line_of(program) == "[]"


def test_the_client_side_of_acpwire_is_that_of_acpwire_client() -> None:
    import acpwire.client

    shared = set(acpwire.__all__) & set(acpwire.client.__all__)
    assert {"connect", "open_agent", "prompt", "SessionState", "Negotiated"} <= shared
    for name in shared:
        assert getattr(acpwire, name) is getattr(acpwire.client, name), name


def test_the_client_package_is_still_an_attribute_of_acpwire() -> None:
    program = "import acpwire\nprint(acpwire.client.load.__module__)"
    assert last_line_of(program) == "acpwire.client.opening"


def test_a_name_imported_on_first_use_is_not_set_before() -> None:
    program = (
        "import sys, acpwire, acpwire.agent, acpwire.client\n"
        f"print(sorted(f'{{p}}.{{n}}' for p, n in {LAZY!r} if n in vars(sys.modules[p])))"
    )
    assert last_line_of(program) == "[]"


def test_using_one_imports_its_home() -> None:
    program = (
        "import sys\nfrom acpwire import SqliteSessionStore\n"
        "print(sorted(m for m in ('acpwire.agent.stores', 'acpwire.agent.remote') "
        "if m in sys.modules))"
    )
    assert last_line_of(program) == "['acpwire.agent.stores']"


def test_every_name_on_the_table_is_exported() -> None:
    assert {name for _, name in LAZY} == set(ON_FIRST_USE)


@pytest.mark.parametrize(("package", "name"), LAZY, ids=[f"{p}.{n}" for p, n in LAZY])
def test_each_resolves_to_the_object_of_its_home(package: str, name: str) -> None:
    module = importlib.import_module(package)
    home = importlib.import_module(ON_FIRST_USE[name])
    assert getattr(module, name) is getattr(home, name)
    assert name in dir(module)
    namespace: dict[str, object] = {}
    exec(f"from {package} import {name}", namespace)
    assert namespace[name] is getattr(home, name)


def type_checking_imports(package: str) -> dict[str, str]:
    """Name -> the module a package's `if TYPE_CHECKING:` block imports it from."""
    path = Path(importlib.import_module(package).__file__ or "")
    found = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module:
                    origin = importlib.util.resolve_name(
                        "." * statement.level + statement.module, package
                    )
                    found |= {alias.asname or alias.name: origin for alias in statement.names}
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_type_checkers_see_each_from_where_it_comes_at_run_time(package: str) -> None:
    """mypy reads the `if TYPE_CHECKING:` imports: each lazy name is there, from a module
    giving the same object as its home."""
    seen = type_checking_imports(package)
    for name in (n for p, n in LAZY if p == package):
        assert name in seen, f"{package} does not import {name} under TYPE_CHECKING"
        from_there = getattr(importlib.import_module(seen[name]), name)
        assert from_there is getattr(importlib.import_module(ON_FIRST_USE[name]), name)


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"module 'acpwire\.agent' has no attribute 'Nope'"):
        _ = acpwire.agent.Nope  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="has no attribute 'Authorize'"):
        _ = acpwire.agent.Authorize  # type: ignore[attr-defined]  # not exported from here


def test_an_old_name_still_warns_at_the_line_using_it() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _ = acpwire.agent.V2Factory
    assert [w.category for w in caught] == [DeprecationWarning]
    assert caught[0].filename == __file__
