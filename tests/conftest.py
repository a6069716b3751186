"""The test loops: `async def` tests run on trio or asyncio (shared helpers are in helpers/).

pytest-trio / anyio's pytest plugin are not used: an `async def test_...` is run here with
`anyio.run`, bounded by `ASYNC_TEST_TIMEOUT` seconds or its `@pytest.mark.async_timeout(s)` (tests bound their own waits more
tightly), on trio, or once per loop of `LOOPS` (`test_x[trio]`, `test_x[asyncio]`) when it
takes the `loop` argument. A module opts all its async tests in with
`pytestmark = pytest.mark.usefixtures("loop")` (its sync tests still run once, unless they
take `loop`: then they pass it to `helpers.loops.run_async`). `ACPWIRE_TEST_LOOPS`
(comma-separated, default `trio,asyncio`; `uvloop` is asyncio on uvloop's event loop) chooses
the loops; an unknown name is an error.

A test that concerns a protocol surface takes `surface` (each of `acp_schema.v1`, `.v1.unstable`,
`acp_schema.v2`, `.v2.unstable`: `test_x[v2.unstable]`), or `v2_surface` / `v1_surface` (the
surfaces of one protocol version), and gets the `acp_schema.Surface`; `ACPWIRE_TEST_SURFACES`
(comma-separated labels, default all four) chooses them (helpers/surfaces.py); an unknown label
is an error.
"""

from __future__ import annotations

import inspect
import os

import anyio
import pytest

from acpwire.fixtures.loops import LOOPS as KNOWN_LOOPS
from acpwire.fixtures.loops import run_on
from helpers import surfaces

ASYNC_TEST_TIMEOUT = 10.0

LOOPS = tuple(os.environ.get("ACPWIRE_TEST_LOOPS", "trio,asyncio").replace(" ", "").split(","))
if unknown := [loop for loop in LOOPS if loop not in KNOWN_LOOPS]:
    raise pytest.UsageError(
        f"ACPWIRE_TEST_LOOPS: unknown loop(s) {unknown}; known: {list(KNOWN_LOOPS)}"
    )
if unknown := surfaces.unknown_labels(surfaces.CHOSEN):
    raise pytest.UsageError(
        f"ACPWIRE_TEST_SURFACES: unknown surface(s) {unknown}; known: {list(surfaces.KNOWN)}"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that takes `loop`, and an async test of a module that uses it, runs per loop."""
    takes_loop = "loop" in inspect.signature(metafunc.function).parameters
    if takes_loop or (
        "loop" in metafunc.fixturenames and inspect.iscoroutinefunction(metafunc.function)
    ):
        metafunc.parametrize("loop", LOOPS)
    for name, version in surfaces.FIXTURES.items():
        if name in metafunc.fixturenames and not _parametrized_by_the_test(metafunc, name):
            labels = surfaces.chosen(version)
            metafunc.parametrize(name, [surfaces.by_label(label) for label in labels], ids=labels)


def _parametrized_by_the_test(metafunc: pytest.Metafunc, name: str) -> bool:
    """Whether the test parametrises `name` itself (a `surface` of its own: a label, ...)."""
    for marker in metafunc.definition.iter_markers("parametrize"):
        names = marker.args[0] if marker.args else marker.kwargs.get("argnames", ())
        if isinstance(names, str):
            names = [part.strip() for part in names.split(",")]
        if name in names:
            return True
    return False


@pytest.fixture
def loop() -> str:
    """`loop` of a sync test in a module that uses it without taking it: not parametrised."""
    return "trio"


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    test = pyfuncitem.obj
    if not inspect.iscoroutinefunction(test):
        return None
    kwargs = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    callspec = getattr(pyfuncitem, "callspec", None)
    loop = callspec.params.get("loop", "trio") if callspec is not None else "trio"

    bound = pyfuncitem.get_closest_marker("async_timeout")
    seconds = float(bound.args[0]) if bound is not None else ASYNC_TEST_TIMEOUT

    async def bounded() -> None:
        with anyio.fail_after(seconds):
            await test(**kwargs)

    run_on(loop, bounded)
    return True
