"""Asking the user on the terminal (`/dev/tty`), not on stdin: stdin may carry the prompts,
stdout the answer. Without a controlling terminal nobody can be asked."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, TextIO

import trio

__all__ = ["Terminal", "open_terminal"]


class Terminal:
    """The controlling terminal, to ask on."""

    def __init__(self, reader: TextIO, writer: TextIO) -> None:
        self.reader = reader
        self.writer = writer

    async def choose(self, title: str, options: Sequence[Any]) -> str | None:
        """Show the options (each with an `option_id`, `name`, `kind`) and read a choice; the
        chosen option's id, None for anything else (not approved: cancelled)."""
        lines = [f"\n[permission] {title}"]
        lines += [f"  {n}) {o.name} ({o.kind})" for n, o in enumerate(options, 1)]
        lines.append(f"choose 1-{len(options)} (anything else: cancel): ")
        self.writer.write("\n".join(lines))
        self.writer.flush()
        answer = await trio.to_thread.run_sync(self.reader.readline, abandon_on_cancel=True)
        number = answer.strip()
        if number.isdigit() and 1 <= int(number) <= len(options):
            return str(options[int(number) - 1].option_id)
        return None

    def close(self) -> None:
        for handle in (self.reader, self.writer):
            with contextlib.suppress(OSError):
                handle.close()


def open_terminal() -> Terminal | None:
    """The controlling terminal, or None when this process has none (CI, a pipe from an
    editor, a service)."""
    try:
        reader = open("/dev/tty")  # a terminal is not seekable: no "r+"
    except OSError:
        return None
    try:
        return Terminal(reader, open("/dev/tty", "w"))  # both closed by Terminal.close
    except OSError:
        reader.close()
        return None
