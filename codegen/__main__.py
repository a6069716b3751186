"""`python -m codegen [--schema-dir schema] [--out generated/acp_schema]`: regenerate the bindings.

The generator writes the generated modules only; acp_schema's hand-written `_runtime`
subpackage lives in generated/acp_schema/_runtime and is copied into any other `--out`, so
that every output is a complete, importable package.

`python -m codegen --check [--out generated/acp_schema]` writes nothing: it fails (exit 1,
naming each file) when a generated file under `--out` is stale, missing or extra; the
hand-written `_runtime` is not compared."""

from __future__ import annotations

import argparse
import filecmp
import json
import sys
import tempfile
import time
from pathlib import Path

from .classify import ShapeError, classify
from .emit import RUNTIME, copy_runtime, emit
from .ir import Module
from .lock import LockMismatch, read_lock, verify_lock
from .patch_fields import patch_fields_for
from .release import ReleaseError, schema_package_version

ROOT = Path(__file__).resolve().parent.parent


def load_modules(schema_dir: Path) -> list[Module]:
    """Verify the lock, then classify every vendored schema file into IR."""
    lock = verify_lock(schema_dir)
    schema_package_version(lock.version)  # a release we can version, before any work
    modules = []
    for name in sorted(lock.files):
        version, filename = name.split("/")
        schema = json.loads((schema_dir / name).read_text())
        source = f"{lock.package}@{lock.version} schema/{name}"
        try:
            module = classify(
                schema,
                version=version,
                unstable=filename == "schema.unstable.json",
                source=source,
                sha256=lock.files[name],
                patch=patch_fields_for(version, lock.version),
            )
        except ShapeError as exc:
            raise ShapeError(f"schema/{name}", str(exc)) from None
        modules.append(module)
    return modules


def summary(m: Module, release: str) -> str:
    patch_types = patch_fields_for(m.version, release)
    three_state = sum(f.three_state for s in m.structs if s.name in patch_types for f in s.fields)
    return (
        f"structs={len(m.structs):3} unions={len(m.unions):2} "
        f"(open {sum(u.unknown is not None for u in m.unions):2}) "
        f"variants={sum(len(u.variants) for u in m.unions):3} three-state={three_state:2} "
        f"methods={len(m.methods):2}"
    )


def differences(committed: Path, fresh: Path) -> list[str]:
    """The generated files that differ between two package trees (RUNTIME not compared)."""
    cmp = filecmp.dircmp(committed, fresh, ignore=["__pycache__", RUNTIME])
    out = [f"extra: {committed / n}" for n in cmp.left_only]
    out += [f"missing: {committed / n}" for n in cmp.right_only]
    out += [f"stale: {committed / n}" for n in cmp.diff_files]
    for name in cmp.common_dirs:
        out += differences(committed / name, fresh / name)
    return out


def check(modules: list[Module], committed: Path, version: str) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "acp_schema"
        emit(modules, fresh, version=version)
        return differences(committed, fresh)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    parser.add_argument("--schema-dir", type=Path, default=ROOT / "schema")
    parser.add_argument("--out", type=Path, default=ROOT / "generated" / "acp_schema")
    parser.add_argument("--check", action="store_true", help="compare --out, write nothing")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        modules = load_modules(args.schema_dir)
    except (ShapeError, LockMismatch, ReleaseError) as exc:
        print(f"codegen: {exc}", file=sys.stderr)
        return 1
    release = read_lock(args.schema_dir).version
    for version, union, tag, name in sorted({(m.version, *u) for m in modules for u in m.unpinned}):
        print(
            f"codegen: warning: {version} {union} variant {tag!r} is not in codegen/names.py;"
            f" named {name} by its rule until it is pinned there",
            file=sys.stderr,
        )
    if args.check:
        problems = check(modules, args.out, schema_package_version(release))
        if problems:
            print(f"codegen: {args.out} is out of date; run `nox -s generate`:", file=sys.stderr)
            print("\n".join(f"  {p}" for p in problems), file=sys.stderr)
            return 1
        print(f"{args.out} is up to date")
        return 0
    written = emit(modules, args.out, version=schema_package_version(release))
    copy_runtime(args.out)
    elapsed = time.perf_counter() - started
    for m in modules:
        print(f"{m.version}{'.unstable' if m.unstable else '':9} {summary(m, release)}")
    print(f"wrote {len(written)} files to {args.out} in {elapsed:.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
