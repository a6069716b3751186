"""The schema lock: where the files in a schema dir came from, and the sha256 of each.

Two kinds of source:

- an npm release, `{"package": "@agentclientprotocol/sdk", "version": "2.4.0"}`, written by
  `python -m codegen.vendor update <version>` (`nox -s update_schema -- <version>`);
- a snapshot of files that were never published as a release (the protocol repository's main
  branch, a fork, a draft PR), `{"snapshot": "2.4.0+main.b7f0005", "path": ..., "ref": ...,
  "commit": ...}`: the release label the user gave, and the directory or git repository (with
  the ref asked for and the commit it named) the files were read from, written by
  `python -m codegen.vendor update --from PATH [--rev REF] --release LABEL`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOCK_NAME = "lock.json"
SCHEMA_FILES = (
    "v1/schema.json",
    "v1/schema.unstable.json",
    "v2/schema.json",
    "v2/schema.unstable.json",
)


class LockMismatch(Exception):
    """A schema dir's files do not match its lock, or it has no usable lock."""


@dataclass(frozen=True)
class NpmRelease:
    """Schema files from a published npm release."""

    package: str
    version: str

    @property
    def release(self) -> str:
        return self.version

    def describe(self) -> str:
        return f"{self.package}@{self.version}"

    def to_json(self) -> dict[str, str]:
        return {"package": self.package, "version": self.version}


@dataclass(frozen=True)
class Snapshot:
    """Schema files from a directory or a git revision, under a release label the user gave."""

    release: str
    path: str
    ref: str | None = None
    commit: str | None = None

    def describe(self) -> str:
        return f"snapshot {self.release}" + (f" (git {self.commit})" if self.commit else "")

    def to_json(self) -> dict[str, str]:
        data = {"snapshot": self.release, "path": self.path}
        if self.ref is not None and self.commit is not None:
            data |= {"ref": self.ref, "commit": self.commit}
        return data


Source = NpmRelease | Snapshot


@dataclass(frozen=True)
class SchemaLock:
    source: Source
    files: dict[str, str]

    @property
    def release(self) -> str:
        """The npm version, or the snapshot's release label."""
        return self.source.release

    @property
    def origin(self) -> str:
        """'@agentclientprotocol/sdk@2.4.0' or 'snapshot 2.4.0+main.b7f0005 (git <commit>)'."""
        return self.source.describe()

    def to_json(self) -> str:
        data = {"source": self.source.to_json(), "files": dict(sorted(self.files.items()))}
        return json.dumps(data, indent=2) + "\n"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def lock_of(schema_dir: Path, source: Source) -> SchemaLock:
    """The lock of the SCHEMA_FILES in `schema_dir` as they are now (nothing written)."""
    return SchemaLock(source, {name: sha256_of(schema_dir / name) for name in SCHEMA_FILES})


def write_lock(schema_dir: Path, source: Source) -> SchemaLock:
    lock = lock_of(schema_dir, source)
    (schema_dir / LOCK_NAME).write_text(lock.to_json())
    return lock


def _source_from_json(data: dict[str, Any]) -> Source:
    if "snapshot" in data:
        return Snapshot(data["snapshot"], data["path"], data.get("ref"), data.get("commit"))
    return NpmRelease(data["package"], data["version"])


def read_lock(schema_dir: Path) -> SchemaLock:
    path = schema_dir / LOCK_NAME
    if not path.is_file():
        raise LockMismatch(
            f"{path} is missing, so the files in {schema_dir} are not a locked release. "
            "Vendor one with `nox -s update_schema -- <npm version>`, or generate from files "
            "that were never released with `python -m codegen --schema-dir DIR "
            "--release X.Y.Z+LABEL` (README: 'Bindings from an unreleased spec')"
        )
    data = json.loads(path.read_text())
    return SchemaLock(_source_from_json(data["source"]), data["files"])


def verify_lock(schema_dir: Path) -> SchemaLock:
    """Return the lock after checking every locked file's sha256; raise LockMismatch otherwise."""
    lock = read_lock(schema_dir)
    for name, expected in lock.files.items():
        path = schema_dir / name
        if not path.exists():
            raise LockMismatch(f"{path}: listed in {LOCK_NAME} but missing")
        actual = sha256_of(path)
        if actual != expected:
            raise LockMismatch(
                f"{path}: sha256 {actual} does not match {LOCK_NAME} ({expected}), which records "
                f"{lock.origin}. Restore the file (`git checkout -- {path}`) if it was edited by "
                "accident; to lock schema files that are not an npm release, run `nox -s "
                "update_schema -- --from <dir or git checkout> [--rev REF] --release "
                "X.Y.Z+LABEL`; for an npm release, `nox -s update_schema -- <npm version>`"
            )
    return lock
