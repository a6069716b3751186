"""The schema lock: which upstream release schema/ holds, and the sha256 of each file."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

LOCK_NAME = "lock.json"
SCHEMA_FILES = (
    "v1/schema.json",
    "v1/schema.unstable.json",
    "v2/schema.json",
    "v2/schema.unstable.json",
)


class LockMismatch(Exception):
    """A vendored schema file does not match the lock."""


@dataclass(frozen=True)
class SchemaLock:
    package: str
    version: str
    files: dict[str, str]

    def to_json(self) -> str:
        data = {
            "source": {"package": self.package, "version": self.version},
            "files": dict(sorted(self.files.items())),
        }
        return json.dumps(data, indent=2) + "\n"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_lock(schema_dir: Path, package: str, version: str) -> SchemaLock:
    lock = SchemaLock(
        package, version, {name: sha256_of(schema_dir / name) for name in SCHEMA_FILES}
    )
    (schema_dir / LOCK_NAME).write_text(lock.to_json())
    return lock


def read_lock(schema_dir: Path) -> SchemaLock:
    data = json.loads((schema_dir / LOCK_NAME).read_text())
    return SchemaLock(data["source"]["package"], data["source"]["version"], data["files"])


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
                f"{path}: sha256 {actual} does not match {LOCK_NAME} ({expected}); "
                "run `nox -s update_schema -- <version>` instead of editing schema files by hand"
            )
    return lock
