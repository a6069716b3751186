"""`python -m codegen`: regenerate the bindings.

    python -m codegen [--schema-dir schema] [--out generated/acp_schema]
    python -m codegen --schema-dir DIR --release X.Y.Z+LABEL [--out OUT]
    python -m codegen --schema-dir REPO --rev REF --release X.Y.Z+LABEL [--out OUT]

The first form generates from a locked schema dir (schema/: the npm release, or the snapshot,
that `nox -s update_schema` vendored; the generator refuses files that do not match lock.json).
The others generate from schema files that were never published as an npm release (the
protocol repository's main branch, a fork, a draft PR; see codegen/sources.py): a directory
holding v1/ and v2/ (or a checkout whose schema/ holds them), or the `schema/` of revision REF
of a git repository (a checkout or a bare clone). `--release` is the label these bindings go
by: the npm release the snapshot builds on, then a label; it becomes the acp-schema version
`X.Y.Z.<bindings revision>+LABEL` (codegen/release.py says why).

Three-state patch fields come from the schema's descriptions (codegen/patch_semantics.py);
where they differ from the hand-kept table (codegen/patch_fields.py) the generator warns,
naming the file, type and field and which side says what, and generates what the schema says.

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
from .lock import LockMismatch
from .patch_fields import PatchDifference
from .patch_fields import differences as patch_differences
from .release import ReleaseError, schema_package_version
from .sources import SchemaFiles, SourceError, load

ROOT = Path(__file__).resolve().parent.parent


def load_modules(schema_dir: Path) -> list[Module]:
    """Verify the lock of a locked schema dir, then classify every schema file into IR."""
    return classify_files(load(schema_dir))[0]


def classify_files(files: SchemaFiles) -> tuple[list[Module], list[PatchDifference]]:
    """Classify every schema file into IR; also where its patch fields differ from the table."""
    lock = files.lock
    schema_package_version(lock.release)  # a release we can version, before any work
    modules: list[Module] = []
    patch_notes: list[PatchDifference] = []
    for name in sorted(lock.files):
        version, filename = name.split("/")
        try:
            schema = json.loads(files.text(name))
        except ValueError as exc:  # not UTF-8, or not JSON
            raise SourceError(f"{lock.origin} schema/{name} is not a JSON file: {exc}") from None
        try:
            module = classify(
                schema,
                version=version,
                unstable=filename == "schema.unstable.json",
                source=f"{lock.origin} schema/{name}",
                sha256=lock.files[name],
            )
        except ShapeError as exc:
            raise ShapeError(f"schema/{name}", str(exc)) from None
        modules.append(module)
        patch_notes += patch_differences(name, schema)
    return modules, patch_notes


def summary(m: Module) -> str:
    three_state = sum(f.three_state for s in m.structs for f in s.fields)
    return (
        f"structs={len(m.structs):3} unions={len(m.unions):2} "
        f"(open {sum(u.unknown is not None for u in m.unions):2}) "
        f"variants={sum(len(u.variants) for u in m.unions):3} three-state={three_state:2} "
        f"methods={len(m.methods):2}"
    )


def warn(message: str) -> None:
    print(f"codegen: warning: {message}", file=sys.stderr)


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
    parser = argparse.ArgumentParser(
        prog="python -m codegen",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--schema-dir",
        type=Path,
        default=ROOT / "schema",
        help="a locked schema dir (default schema/), a dir of schema files, or with --rev a git repo",
    )
    parser.add_argument("--rev", help="read PATH's schema/ at this git revision (needs --release)")
    parser.add_argument("--release", help="the label of unlocked schema files: X.Y.Z+LABEL")
    parser.add_argument("--out", type=Path, default=ROOT / "generated" / "acp_schema")
    parser.add_argument("--check", action="store_true", help="compare --out, write nothing")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        files = load(args.schema_dir, args.rev, args.release)
        modules, patch_notes = classify_files(files)
    except (ShapeError, LockMismatch, ReleaseError, SourceError) as exc:
        print(f"codegen: {exc}", file=sys.stderr)
        return 1
    release = files.lock.release
    for version, union, tag, name in sorted({(m.version, *u) for m in modules for u in m.unpinned}):
        warn(
            f"{version} {union} variant {tag!r} is not in codegen/names.py;"
            f" named {name} by its rule until it is pinned there"
        )
    for note in patch_notes:
        warn(f"patch fields: {note}")
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
    print(f"{files.lock.origin} -> acp-schema {schema_package_version(release)}")
    for m in modules:
        print(f"{m.version}{'.unstable' if m.unstable else '':9} {summary(m)}")
    print(f"wrote {len(written)} files to {args.out} in {elapsed:.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
