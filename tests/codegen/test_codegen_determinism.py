"""`python -m codegen` is deterministic, and every generated file says where it came from.

Two runs (separate interpreters with different hash seeds, so set/dict-order accidents show up)
into different directories must produce byte-identical trees. Each module generated from one
schema file must start with codegen/templates/_header.j2 rendered with that file's source and
the sha256 recorded in schema/lock.json (which must also be the file's actual sha256).

`acp_schema/__init__.py` is not generated from one schema file and so carries no _header.j2
header (it covers all four; its docstring lists each source with a sha256): it is checked for its
own provenance lines instead. `acp_schema/_runtime/` is hand-written (it lives in
generated/acp_schema/_runtime, marked so): a package generated elsewhere holds an exact copy.
The generator never deletes it when regenerating in place, and `python -m codegen --check`
(`nox -s check_generated`) names every stale, missing or extra generated file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest

from codegen.lock import read_lock, sha256_of
from codegen.render import oneline
from helpers.paths import ROOT

SCHEMA_DIR = ROOT / "schema"
HEADER_TEMPLATE = ROOT / "codegen" / "templates" / "_header.j2"
RUNTIME_SOURCE = ROOT / "generated" / "acp_schema" / "_runtime"
HAND_WRITTEN = "# Hand-written part of acp_schema (not generated): edit it here; codegen copies it"
# generated package directory -> schema file it is generated from
PACKAGES = {
    "v1": "v1/schema.json",
    "v1/unstable": "v1/schema.unstable.json",
    "v2": "v2/schema.json",
    "v2/unstable": "v2/schema.unstable.json",
}


def generate(out: Path, hash_seed: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    proc = subprocess.run(
        [sys.executable, "-m", "codegen", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"codegen failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def generated_twice(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    first = tmp_path_factory.mktemp("gen_a") / "acp_schema"
    second = tmp_path_factory.mktemp("gen_b") / "nested" / "acp_schema"
    generate(first, "0")
    generate(second, "4242")
    return first, second


def expected_header(schema_file: str) -> str:
    lock = read_lock(SCHEMA_DIR)
    sha = lock.files[schema_file]
    assert sha == sha256_of(SCHEMA_DIR / schema_file), (
        f"schema/{schema_file} does not match lock.json"
    )
    env = jinja2.Environment(keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    env.filters["oneline"] = oneline
    text = env.from_string(HEADER_TEMPLATE.read_text()).render(
        source=f"{lock.origin} schema/{schema_file}", sha256=sha
    )
    # Independent of the template: the header names the release, the file and the full sha256.
    assert f"{lock.origin} schema/{schema_file}" in text.splitlines()[0]
    assert text.splitlines()[1].endswith(sha)
    return text


def test_two_runs_are_byte_identical(generated_twice: tuple[Path, Path]) -> None:
    first, second = map(tree, generated_twice)
    assert sorted(first) == sorted(second)
    different = [name for name in first if first[name] != second[name]]
    assert not different, f"generated files differ between runs: {different}"
    assert len(first) >= 15


def area_files() -> set[str]:
    """Each surface's `_types` package and one module per area codegen/areas.py assigns."""
    from codegen.__main__ import load_modules
    from codegen.areas import assign

    files = set()
    for module in load_modules(SCHEMA_DIR):
        pkg = module.version + ("/unstable" if module.unstable else "")
        files |= {f"{pkg}/_types/__init__.py"}
        files |= {f"{pkg}/_types/{area}.py" for area in set(assign(module).values())}
    return files


def test_every_generated_file_is_accounted_for(generated_twice: tuple[Path, Path]) -> None:
    files = set(tree(generated_twice[0]))
    runtime = {f"_runtime/{name}" for name in tree(RUNTIME_SOURCE)}
    expected = (
        {"__init__.py", "py.typed"}
        | runtime
        | {
            f"{pkg}/{name}"
            for pkg in PACKAGES
            for name in ("__init__.py", "_surface.py", "types.py", "methods.py", "handlers.py")
        }
        | area_files()
    )
    assert files == expected


@pytest.mark.parametrize("which", ["fresh", "committed"])
def test_headers_name_schema_source_and_sha256(
    which: str, generated_twice: tuple[Path, Path]
) -> None:
    """Fresh output, and the committed generated/acp_schema (stale headers mean stale bindings)."""
    root = generated_twice[0] if which == "fresh" else ROOT / "generated" / "acp_schema"
    py_files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    assert py_files, root
    lock = read_lock(SCHEMA_DIR)
    problems = []
    for name in py_files:
        text = (root / name).read_text()
        package = name.rpartition("/")[0].removesuffix("/_types")  # area modules: their surface's
        if package in PACKAGES:
            header = expected_header(PACKAGES[package])
            if not text.startswith(header):
                problems.append(
                    f"{name}: starts with {text.splitlines()[:3]}, expected {header.splitlines()}"
                )
        elif name == "__init__.py":
            if not text.startswith("# Generated by acpwire codegen."):
                problems.append(f"{name}: no generated-file line")
            for schema_file, sha in lock.files.items():
                source = f"{lock.origin} schema/{schema_file}"
                if f'"{source}"' not in text or f'"{sha}"' not in text:
                    problems.append(f"{name}: does not list schema/{schema_file} with its sha256")
        elif package == "_runtime":
            if not text.startswith(HAND_WRITTEN):
                problems.append(f"{name}: hand-written module without the hand-written line")
            if text != (RUNTIME_SOURCE / name.partition("/")[2]).read_text():
                problems.append(f"{name}: not a copy of generated/acp_schema/{name}")
        else:
            problems.append(f"{name}: unexpected generated file")
    assert not problems, "\n".join(problems)


def run_codegen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_check_names_stale_missing_and_extra_generated_files(tmp_path: Path) -> None:
    """`--check` compares generated files only: a changed hand-written module is no finding."""
    package = tmp_path / "acp_schema"
    assert run_codegen("--out", str(package)).returncode == 0
    assert run_codegen("--check", "--out", str(package)).returncode == 0
    (package / "v2" / "types.py").write_text("stale\n")
    (package / "v1" / "methods.py").unlink()
    (package / "v2" / "extra.py").write_text("")
    (package / "_runtime" / "codec.py").write_text("# edited by hand\n")
    checked = run_codegen("--check", "--out", str(package))
    assert checked.returncode == 1
    findings = sorted(line.strip() for line in checked.stderr.splitlines()[1:])
    assert findings == [
        f"extra: {package / 'v2' / 'extra.py'}",
        f"missing: {package / 'v1' / 'methods.py'}",
        f"stale: {package / 'v2' / 'types.py'}",
    ]


def test_regenerating_in_place_keeps_the_hand_written_runtime(tmp_path: Path) -> None:
    """The generator removes what it generated before (a stale module of a dropped surface)
    and never the hand-written `_runtime`, wherever the package is."""
    from codegen.__main__ import load_modules
    from codegen.emit import emit

    package = tmp_path / "acp_schema"
    (package / "_runtime").mkdir(parents=True)
    (package / "_runtime" / "codec.py").write_text("# hand-written\n")
    (package / "v3").mkdir()
    (package / "v3" / "types.py").write_text("# generated by an older run\n")
    emit(load_modules(SCHEMA_DIR), package, version="0.0.0.0")
    assert (package / "_runtime" / "codec.py").read_text() == "# hand-written\n"
    assert not (package / "v3").exists()
    assert (package / "v2" / "types.py").exists()
