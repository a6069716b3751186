"""The README's "Testing your agent or client": its example test files run under pytest with
acpwire's plugin and anyio's, each test on trio and on asyncio, and the plugin is what the
acpwire wheel registers with pytest."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from helpers.paths import ROOT
from helpers.processes import PYTHONPATH
from helpers.traces import record_hello_trace

README = (ROOT / "README.md").read_text()
EXAMPLE = re.compile(r"<!-- pytest example: (\S+) -->\n```python\n(.*?)```\n", re.S)
PLUGIN = "acpwire.testing.pytest_plugin"


def run_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", PLUGIN, "-p", "no:cacheprovider", *args],
        cwd=folder,
        env={**os.environ, **PYTHONPATH},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_readme_example_tests_pass_on_both_loops(tmp_path: Path) -> None:
    examples = dict(EXAMPLE.findall(README))
    assert set(examples) == {
        "conftest.py",
        "test_hello_agent.py",
        "test_hello_client.py",
        "test_hello_client_replay.py",
    }
    for name, code in examples.items():
        (tmp_path / name).write_text(code)
    record_hello_trace(tmp_path / "hello.trace")  # as the README says it was recorded
    done = run_pytest(tmp_path, "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    for test in (
        "test_hello_agent.py::test_it_greets_once_allowed",
        "test_hello_agent.py::test_it_refuses_when_the_user_says_no",
        "test_hello_client.py::test_it_allows_and_shows_the_reply",
        "test_hello_client_replay.py::test_it_keeps_to_the_recorded_session",
    ):
        for loop in ("trio", "asyncio"):
            assert f"{test}[{loop}] PASSED" in done.stdout
    assert "8 passed" in done.stdout


def test_a_failing_user_test_fails(tmp_path: Path) -> None:
    """The fixtures report what the agent did: a wrong expectation fails the user's test."""
    examples = dict(EXAMPLE.findall(README))
    (tmp_path / "conftest.py").write_text(examples["conftest.py"])
    wrong = examples["test_hello_agent.py"].replace('answers=["no"]', 'answers=["yes"]')
    (tmp_path / "test_wrong.py").write_text(wrong)
    done = run_pytest(tmp_path, "-q")
    assert done.returncode == 1
    assert "2 failed, 2 passed" in done.stdout
    assert "AssertionError" in done.stdout


def test_the_wheel_registers_the_plugin_with_pytest() -> None:
    meta = tomllib.loads((ROOT / "distributions" / "acpwire" / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["pytest11"] == {"acpwire": PLUGIN}
    plugin = importlib.import_module(PLUGIN)
    assert {"acp_fake_agent", "acp_client_for"} <= set(vars(plugin))
