"""`HistoryWriter`: the history of durable stores, written from a thread of its own.

A turn records every update it sends, on the send path, on the event loop's thread; a durable
store must not write there (a write is blocking I/O: a commit, a network round trip). The
recorder only puts the update on a queue (well under a microsecond); the writer thread takes
everything queued at once and writes it as one batch (one transaction, one pipeline), in the
order it was recorded: batches grow by themselves while a write is under way (group commit),
so the number of writes follows the storage's speed, not the number of updates.

Readers see their own writes: `flush()` waits until everything recorded so far is written
(the history of a session is read after a flush). A write that fails is logged and retried
with the next batch; `close()` writes what is queued and stops the thread.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence

log = logging.getLogger("acpwire.agent")

Entry = tuple[str, object]
"""One recorded update: (session id, the update)."""

RETRY_PAUSE = 0.5
"""Seconds the writer waits before writing a batch again after a failure."""


class HistoryWriter:
    """Writes the entries given to `put` with `write(batch)`, in order, from a thread."""

    def __init__(self, write: Callable[[Sequence[Entry]], None], *, name: str) -> None:
        """`write(batch)`: write the entries (in order) or raise; called on the writer thread
        only. `name`: the thread's name (in log messages)."""
        self._write = write
        self._queue: queue.SimpleQueue[Entry | threading.Event | None] = queue.SimpleQueue()
        self._closed = False
        self.batches = 0
        """Batches written so far (for measurements)."""
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, entry: Entry) -> None:
        """Queue one entry (on the send path: no I/O here)."""
        self._queue.put(entry)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything put so far is written; False when `timeout` passed first."""
        if self._closed:
            return True
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout)

    def close(self) -> None:
        """Write what is queued, then stop the thread."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._thread.join()

    def _run(self) -> None:
        pending: list[Entry] = []  # taken from the queue, not written yet
        while True:
            try:  # after a failed write, retry within RETRY_PAUSE even if nothing comes
                item = self._queue.get(timeout=RETRY_PAUSE if pending else None)
            except queue.Empty:
                item = None if self._closed else threading.Event()
            markers: list[threading.Event] = []
            stop = False
            while True:  # everything queued by now joins the batch
                if item is None:
                    stop = True
                elif isinstance(item, threading.Event):
                    markers.append(item)
                else:
                    pending.append(item)
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if pending:
                try:
                    self._write(pending)
                    self.batches += 1
                    pending = []
                except Exception:
                    log.exception(
                        "%s: writing %d updates failed (tried again with the next batch)",
                        self._thread.name,
                        len(pending),
                    )
                    if not stop:
                        time.sleep(RETRY_PAUSE)
            for marker in markers:  # set even after a failure: readers never hang on it
                marker.set()
            if stop:
                return
