"""The nox sessions that vendor schema files pass every argument on to `codegen.vendor` (they
used to pass the first one only: `--package X` was silently dropped), and `dist` ends saying
which acpwire its wheel installs next to; `bench` passes its arguments to every script, or
runs the one script named first with the rest. noxfile.py runs here with a stand-in for nox that
records the commands instead of running them."""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from helpers.paths import ROOT


class RecordingSession:
    def __init__(self, *posargs: str) -> None:
        self.posargs = list(posargs)
        self.runs: list[tuple[str, ...]] = []

    def install(self, *args: str) -> None:
        pass

    def run(self, *args: str, **kwargs: Any) -> None:
        self.runs.append(args)

    def log(self, message: str) -> None:
        pass

    def error(self, message: str) -> None:
        raise SystemExit(message)


def session(*args: Any, **kwargs: Any) -> Any:
    """`@nox.session` and `@nox.session(...)`: the function itself."""
    if args and callable(args[0]):
        return args[0]
    return lambda function: function


@pytest.fixture
def noxfile(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> types.ModuleType:
    fake = types.ModuleType("nox")
    fake.session = session  # type: ignore[attr-defined]
    fake.options = types.SimpleNamespace()  # type: ignore[attr-defined]
    fake.Session = RecordingSession  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "nox", fake)
    spec = importlib.util.spec_from_file_location("noxfile_under_test", ROOT / "noxfile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "BUILD", tmp_path / "build")
    monkeypatch.setattr(module, "DIST", tmp_path / "dist")
    return module


VENDOR = ("python", "-m", "codegen.vendor", "update")


@pytest.mark.parametrize(
    "posargs",
    [
        ("--package", "@scope/pkg", "2.0.0"),
        ("2.0.0", "--package", "@scope/pkg"),
        ("--from", "../acp", "--rev", "main", "--release", "2.4.0+main.b7f0005"),
    ],
)
def test_update_schema_passes_every_argument(
    noxfile: types.ModuleType, posargs: tuple[str, ...]
) -> None:
    recorded = RecordingSession(*posargs)
    noxfile.update_schema(recorded)
    assert recorded.runs == [(*VENDOR, *posargs), ("python", "-m", "codegen")]


def test_update_schema_without_arguments_shows_both_forms(noxfile: types.ModuleType) -> None:
    with pytest.raises(SystemExit, match=r"<npm version> \[--package NAME\]") as exited:
        noxfile.update_schema(RecordingSession())
    assert "--from PATH [--rev REF] --release X.Y.Z+LABEL" in str(exited.value)


def test_dist_of_another_release_passes_every_argument_and_ends_with_compatibility(
    noxfile: types.ModuleType, tmp_path: Path
) -> None:
    fetched = tmp_path / "build" / "schema-other"
    fetched.mkdir(parents=True)
    source = {"snapshot": "2.4.0+main.b7f0005", "path": "../acp", "ref": "main", "commit": "c"}
    (fetched / "lock.json").write_text(json.dumps({"source": source, "files": {}}))
    posargs = ("--from", "../acp", "--rev", "main", "--release", "2.4.0+main.b7f0005")
    recorded = RecordingSession(*posargs)

    noxfile.dist(recorded)

    compare = ("--compare-with", str(ROOT / "schema"))
    assert recorded.runs[0] == (*VENDOR, "--schema-dir", str(fetched), *compare, *posargs)
    wheel_dir = tmp_path / "dist" / "schema-2.4.0+main.b7f0005"
    assert str(wheel_dir) in recorded.runs[2]  # pip wheel --wheel-dir
    assert recorded.runs[-1] == ("python", "-m", "codegen.release", "compatibility", str(fetched))


def bench_scripts(recorded: RecordingSession) -> list[tuple[str, ...]]:
    """The bench scripts the session ran (not `npm ci`, run when node_modules is stale)."""
    return [run for run in recorded.runs if run[0] == "python"]


@pytest.mark.parametrize("script", ["remote.py", "bench/remote.py"])
def test_bench_runs_the_script_named_first_with_its_own_options(
    noxfile: types.ModuleType, script: str
) -> None:
    options = ("--server", "hypercorn", "hypercorn-buffered", "--only", "acpwire v2 websocket")
    recorded = RecordingSession(script, *options)
    noxfile.bench(recorded)
    assert bench_scripts(recorded) == [("python", "bench/remote.py", *options)]


def test_bench_passes_options_to_every_script(noxfile: types.ModuleType) -> None:
    recorded = RecordingSession("--quick")
    noxfile.bench(recorded)
    ran = bench_scripts(recorded)
    assert len(ran) > 1 and ("python", "bench/remote.py", "--quick") in ran
    assert all(run[2:] == ("--quick",) for run in ran)
