"""The endpoints' context managers raise one exception, not trio's nursery ExceptionGroups.

    with single_exception():
        async with trio.open_nursery() as nursery: ...

An `ExceptionGroup` coming out of the block is replaced by one of the exceptions in it, so
`except PeerExited` around `open_agent(...)` works, and so does `except KeyError` around a
block whose code raised it. The rule, when the group holds several:

1. `trio.Cancelled` only counts when there is nothing else (it is how a nursery's siblings
   end when one of them fails, never the cause).
2. An exception that is not an `Exception` (KeyboardInterrupt, SystemExit) comes first.
3. Otherwise the first one in the group, depth first (the block's own error or the first
   task that failed).

The others stay reachable: the raised exception gets a note naming them and its
`__context__` is an `ExceptionGroup` of them. With a single exception its own `__context__`
is kept as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import trio


@contextmanager
def single_exception() -> Iterator[None]:
    """Raise the most relevant exception of an ExceptionGroup leaving the block (see above)."""
    try:
        yield
    except BaseExceptionGroup as group:
        chosen, others = most_relevant(group)
        context = chosen.__context__
        if others:
            chosen.add_note(
                f"acpwire: {len(others)} other exception(s) at the same time, in __context__: "
                + ", ".join(repr(other) for other in others)
            )
            context = BaseExceptionGroup("raised at the same time", others)
        try:
            raise chosen  # the group is not the cause: it only carried `chosen`
        finally:
            chosen.__context__ = context
            del chosen, context, others


def most_relevant(
    group: BaseExceptionGroup[BaseException],
) -> tuple[BaseException, list[BaseException]]:
    """The exception to raise for `group`, and the others that are not cancellations."""
    leaves = list(_leaves(group))
    real = [leaf for leaf in leaves if not isinstance(leaf, trio.Cancelled)] or leaves[:1]
    chosen = next((leaf for leaf in real if not isinstance(leaf, Exception)), real[0])
    return chosen, [leaf for leaf in real if leaf is not chosen]


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error
