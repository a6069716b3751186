"""The endpoints' context managers raise one exception, not the ExceptionGroups of nurseries
(trio) and task groups (anyio on asyncio).

    with SingleException() as single:
        async with loop.open_nursery() as nursery:
            ...
            with single.callers_code():
                yield conn

An `ExceptionGroup` coming out of the block is replaced by one of the exceptions in it, so
`except PeerExited` around `open_agent(...)` works, and so does `except KeyError` around a
block whose code raised it. The rule, when the group holds several:

1. A cancellation (`trio.Cancelled`, `asyncio.CancelledError`) only counts when there is nothing else (it is how a nursery's siblings
   end when one of them fails, never the cause).
2. An exception that is not an `Exception` (KeyboardInterrupt, SystemExit) comes first.
3. Otherwise the first one in the group, depth first (the block's own error or the first
   task that failed).

The others stay reachable: the raised exception gets a note naming them and its
`__context__` is an `ExceptionGroup` of them. With a single exception its own `__context__`
is kept as it was. What the caller's code raised (marked with `callers_code()`) is kept
whole, even an ExceptionGroup of its own: only the groups of internal nurseries go.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

from ._loop import cancellations


class SingleException:
    """Raise the most relevant exception of an ExceptionGroup leaving the block (see above)."""

    def __init__(self) -> None:
        self._callers: list[BaseException] = []

    @contextmanager
    def callers_code(self) -> Iterator[None]:
        """Around the caller's code (an async context manager's `yield`): what it raises is
        its own and is kept whole."""
        try:
            yield
        except BaseException as error:
            self._callers.append(error)
            raise

    def __enter__(self) -> SingleException:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if not isinstance(error, BaseExceptionGroup) or error in self._callers:
            return
        chosen, others = self.most_relevant(error)
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
        self, group: BaseExceptionGroup[BaseException]
    ) -> tuple[BaseException, list[BaseException]]:
        """The exception to raise for `group`, and the others that are not cancellations."""
        leaves = list(self._leaves(group))
        cancelled = cancellations()
        real = [leaf for leaf in leaves if not isinstance(leaf, cancelled)] or leaves[:1]
        chosen = next((leaf for leaf in real if not isinstance(leaf, Exception)), real[0])
        return chosen, [leaf for leaf in real if leaf is not chosen]

    def _leaves(self, error: BaseException) -> Iterator[BaseException]:
        own = self._callers_original(error)
        if own is not None:
            yield own
        elif isinstance(error, BaseExceptionGroup):
            for inner in error.exceptions:
                yield from self._leaves(inner)
        else:
            yield error

    def _callers_original(self, error: BaseException) -> BaseException | None:
        """The caller's exception `error` is, or a copy of (trio's cancel scopes split a
        group passing through them: a new group with the same exceptions in it)."""
        for own in self._callers:
            if error is own or (
                isinstance(error, BaseExceptionGroup)
                and isinstance(own, BaseExceptionGroup)
                and _plain(error) == _plain(own)
            ):
                return own
        return None


def _plain(error: BaseException) -> list[int]:
    """The identities of the exceptions in a (nested) group that are not groups."""
    if isinstance(error, BaseExceptionGroup):
        return [plain for inner in error.exceptions for plain in _plain(inner)]
    return [id(error)]
