"""Where schema files come from: a locked schema dir, or a snapshot under a release label.

- A locked dir (schema/, or a dir `codegen.vendor fetch` wrote): every file is checked against
  its lock.json, whose source names the release.
- A snapshot, files that were never published as an npm release (the protocol repository's
  main branch, a fork, a draft PR), with a release label the user gives (`--release
  X.Y.Z+LABEL`: the npm release it builds on, then a label, see codegen/release.py):
    - a directory holding v1/ and v2/, or a checkout whose schema/ holds them;
    - a git repository (a checkout or a bare clone) and a revision (`--rev REF`): the files at
      `schema/v1/...` and `schema/v2/...` of that revision, read with `git show` (nothing is
      checked out, the working tree is not looked at).

`python -m codegen` generates from any of these (`--schema-dir PATH [--rev REF] [--release
LABEL]`); `python -m codegen.vendor update --from PATH [--rev REF] --release LABEL` copies a
snapshot into schema/ and locks it.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .lock import LOCK_NAME, SCHEMA_FILES, LockMismatch, SchemaLock, Snapshot, verify_lock
from .release import local_label, schema_package_version

UNRELEASED_HELP = "README: 'Bindings from an unreleased spec'"


class SourceError(Exception):
    """Schema files that cannot be read, or a release label that does not fit them."""


@dataclass(frozen=True)
class SchemaFiles:
    """The schema files to generate from, with the lock that names their release."""

    lock: SchemaLock
    contents: dict[str, bytes]  # SCHEMA_FILES name -> the file's bytes

    def text(self, name: str) -> str:
        return self.contents[name].decode("utf-8")


def check_snapshot_label(release: str) -> None:
    """A snapshot's label must carry a +LABEL part (and be a release codegen.release versions)."""
    schema_package_version(release)  # raises ReleaseError naming the accepted forms
    if local_label(release) is None:
        raise SourceError(
            f"release label {release!r} names an npm release, but these files are a snapshot: "
            f"add a label, e.g. {release}+main.<commit>, so that its acp-schema version "
            f"({schema_package_version(release + '+main')} for '+main') cannot be mistaken for "
            f"release {release}'s"
        )


def files_dir(path: Path) -> Path:
    """`path` itself when it holds v1/ and v2/, else its schema/ (a checkout of the protocol)."""
    for candidate in (path, path / "schema"):
        if all((candidate / name).is_file() for name in SCHEMA_FILES):
            return candidate
    if not path.is_dir():
        raise SourceError(f"{path} is not a directory")
    missing = [name for name in SCHEMA_FILES if not (path / name).is_file()]
    raise SourceError(
        f"{path} does not hold the schema files: {', '.join(missing)} missing (neither there "
        f"nor under {path / 'schema'}); bindings need all of {', '.join(SCHEMA_FILES)}"
    )


def _git(repo: Path, *args: str) -> bytes:
    command = ["git", "-C", str(repo), *args]
    try:
        return subprocess.run(command, check=True, capture_output=True).stdout
    except FileNotFoundError as exc:
        raise SourceError("git not found on PATH; --rev reads schema files with git") from exc
    except subprocess.CalledProcessError as exc:
        detail = exc.stderr.decode(errors="replace").strip()
        raise SourceError(f"`{' '.join(command)}` failed: {detail}") from exc


def read_git(repo: Path, rev: str) -> tuple[str, dict[str, bytes]]:
    """The commit `rev` names in `repo`, and the SCHEMA_FILES under its schema/."""
    if not repo.is_dir():
        raise SourceError(f"{repo} is not a directory (--rev needs a git checkout or bare clone)")
    commit = _git(repo, "rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}")
    commit_id = commit.decode().strip()
    listed = _git(repo, "ls-tree", "-r", "--name-only", commit_id, "--", "schema/v1", "schema/v2")
    present = set(listed.decode().splitlines())
    missing = [name for name in SCHEMA_FILES if f"schema/{name}" not in present]
    if missing:
        raise SourceError(
            f"{repo} at {rev} ({commit_id}) has no {', '.join(f'schema/{m}' for m in missing)}; "
            f"bindings need all of {', '.join(f'schema/{n}' for n in SCHEMA_FILES)}"
        )
    return commit_id, {
        name: _git(repo, "show", f"{commit_id}:schema/{name}") for name in SCHEMA_FILES
    }


def read_snapshot(path: Path, rev: str | None, release: str) -> SchemaFiles:
    """A snapshot's files (from a directory, or from git when `rev` is given) and their lock."""
    check_snapshot_label(release)
    location = str(path.resolve())
    if rev is None:
        directory = files_dir(path)
        contents = {name: (directory / name).read_bytes() for name in SCHEMA_FILES}
        source = Snapshot(release, str(directory.resolve()))
    else:
        commit, contents = read_git(path, rev)
        source = Snapshot(release, location, rev, commit)
    sha256s = {name: hashlib.sha256(data).hexdigest() for name, data in contents.items()}
    return SchemaFiles(SchemaLock(source, sha256s), contents)


def load(path: Path, rev: str | None = None, release: str | None = None) -> SchemaFiles:
    """The schema files `python -m codegen --schema-dir PATH [--rev REF] [--release LABEL]` means."""
    if rev is None and (path / LOCK_NAME).is_file():
        lock = verify_lock(path)
        if release is not None and release != lock.release:
            raise SourceError(
                f"{path} is locked as {lock.origin} ({LOCK_NAME}); --release {release} is for "
                "schema files without a lock: drop --release, or copy the files elsewhere"
            )
        return SchemaFiles(lock, {name: (path / name).read_bytes() for name in lock.files})
    if release is None:
        what = f"{path} at {rev}" if rev is not None else f"{path} (no {LOCK_NAME})"
        raise LockMismatch(
            f"the schema files of {what} are not a locked release: to generate from them, give "
            "the release "
            "label they go by, `--release X.Y.Z+LABEL` (the npm release they build on, then a "
            f"label, e.g. 2.4.0+main.b7f0005; {UNRELEASED_HELP}); to vendor an npm release "
            "into schema/, run `nox -s update_schema -- <npm version>`"
        )
    return read_snapshot(path, rev, release)
