"""A real Redis server for a test, started and stopped by the test itself (`redis_server`):
on a free loopback port, in memory only (no snapshot, no append-only file). Missing
`redis-server` fails the test, naming the install (`.ci/run` installs it)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest

INSTALL = "apt-get install redis-server (Debian; .ci/run installs it)"


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """A Redis server while the block runs; yields its URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail(f"redis-server is not installed, and the Redis store tests need it: {INSTALL}")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        binary,
        "--bind",
        "127.0.0.1",
        "--port",
        str(port),
        "--save",
        "",
        "--appendonly",
        "no",
    ]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as probe:
                    probe.sendall(b"PING\r\n")
                    if probe.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"redis-server did not start on port {port} (exit {server.poll()})")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        server.wait(timeout=10)
