"""Versions of the two distributions, and the staging of their build directories.

`acp-schema` is versioned `<schema release>.<bindings revision>`: bindings generated from
@agentclientprotocol/sdk 2.4.0 by revision 3 of this generator are `2.4.0.3`, so
`acp-schema==2.4.0.*` means "schema release 2.4.0, latest bindings fixes". BINDINGS_REVISION
is the one place the revision lives; bump it with every fix to the generated code (the
support module, the templates, a mapping rule) that changes what users get for the same schema.

`acpwire` requires the `acp-schema` of the schema release it is tested against (schema/lock.json)
from this revision on, up to the next minor release: `acp-schema>=2.4.0.3,<2.5`.

    python -m codegen.release stage-schema <schema-dir> <build-dir>
    python -m codegen.release stage-runtime <build-dir>

write a self-contained project (pyproject.toml, README.md, LICENSE, CHANGELOG.md and the
package) that `pip wheel` builds.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from codegen.lock import read_lock

BINDINGS_REVISION = 1

ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTIONS = ROOT / "distributions"
SHARED_FILES = ("LICENSE", "CHANGELOG.md")
# The file acpwire's build hook reads its acp-schema requirement from.
REQUIREMENT_FILE = "acp-schema-requirement.txt"

_RELEASE = re.compile(r"(\d+)\.(\d+)\.(\d+)")


class ReleaseError(Exception):
    """A schema release that cannot be turned into a package version."""


def _release_parts(release: str) -> tuple[int, int, int]:
    match = _RELEASE.fullmatch(release)
    if match is None:
        raise ReleaseError(
            f"schema release {release!r} is not MAJOR.MINOR.PATCH; "
            "acp-schema versions are <release>.<bindings revision> and need a final release"
        )
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def schema_package_version(release: str, revision: int = BINDINGS_REVISION) -> str:
    """'2.4.0' -> '2.4.0.<revision>': the acp-schema version for bindings of that release."""
    major, minor, patch = _release_parts(release)
    return f"{major}.{minor}.{patch}.{revision}"


def runtime_requirement(release: str, revision: int = BINDINGS_REVISION) -> str:
    """The acp-schema requirement of an acpwire tested against bindings of `release`."""
    major, minor, _ = _release_parts(release)
    return f"acp-schema>={schema_package_version(release, revision)},<{major}.{minor + 1}"


def _copy_project_files(distribution: str, build_dir: Path) -> None:
    source = DISTRIBUTIONS / distribution
    if build_dir.exists():
        shutil.rmtree(build_dir)
    shutil.copytree(source, build_dir, ignore=shutil.ignore_patterns("__pycache__"))
    for name in SHARED_FILES:
        shutil.copyfile(ROOT / name, build_dir / name)


def stage_schema(schema_dir: Path, build_dir: Path) -> None:
    """The acp-schema project for the release in `schema_dir`, generated into `build_dir`."""
    _copy_project_files("acp-schema", build_dir)
    command = [sys.executable, "-m", "codegen", "--schema-dir", str(schema_dir)]
    subprocess.run([*command, "--out", str(build_dir / "acp_schema")], check=True, cwd=ROOT)


def stage_runtime(build_dir: Path, schema_dir: Path = ROOT / "schema") -> None:
    """The acpwire project: runtime/acpwire plus its acp-schema requirement from the lock."""
    _copy_project_files("acpwire", build_dir)
    shutil.copytree(
        ROOT / "runtime" / "acpwire",
        build_dir / "acpwire",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    requirement = runtime_requirement(read_lock(schema_dir).version)
    (build_dir / REQUIREMENT_FILE).write_text(requirement + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen.release", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    schema_cmd = commands.add_parser("stage-schema", help="stage the acp-schema project")
    schema_cmd.add_argument("schema_dir", type=Path)
    schema_cmd.add_argument("build_dir", type=Path)
    runtime_cmd = commands.add_parser("stage-runtime", help="stage the acpwire project")
    runtime_cmd.add_argument("build_dir", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "stage-schema":
            stage_schema(args.schema_dir.resolve(), args.build_dir.resolve())
        else:
            stage_runtime(args.build_dir.resolve())
    except (ReleaseError, subprocess.CalledProcessError) as exc:
        print(f"codegen.release: {exc}", file=sys.stderr)
        return 1
    print(f"staged {args.build_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
