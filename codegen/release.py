"""Versions of the two distributions, and the staging of their build directories.

`acp-schema` is versioned `<schema release>.<bindings revision>`: bindings generated from
@agentclientprotocol/sdk 2.4.0 by revision 3 of this generator are `2.4.0.3`, so
`acp-schema==2.4.0.*` means "schema release 2.4.0, latest bindings fixes". BINDINGS_REVISION
is the one place the revision lives; bump it with every fix to the generated code (the
support module, the templates, a mapping rule) that changes what users get for the same schema.

`acpwire` requires the `acp-schema` of the schema release it is tested against (schema/lock.json)
from this revision on, up to the next minor release: `acp-schema>=2.4.0.3,<2.5`.

Bindings of a snapshot (schema files never published as an npm release, see codegen/sources.py)
carry the label the user gave as a PEP 440 local version: release label `2.4.0+main.b7f0005`
(the npm release the snapshot builds on, then a label) gives `2.4.0.3+main.b7f0005`. A local
version sorts right after the release it builds on, satisfies the acpwire requirement of that
release series (version specifiers ignore local labels, so it installs next to that acpwire),
and cannot be uploaded to PyPI, so a snapshot's wheel is never published as if it were the
release. (A pre-release number such as `2.5.0.3.dev0` would be hidden from pip by default, fall
outside `<2.5`, and claim a release number upstream has not given; labels with `-` are refused.)

    python -m codegen.release stage-schema <schema-dir> <build-dir>
    python -m codegen.release stage-runtime <build-dir>

write a self-contained project (pyproject.toml, README.md, LICENSE, CHANGELOG.md and the
package) that `pip wheel` builds. The acpwire README's requirement line is written from
`runtime_requirement`, the same source as the wheel's metadata, so the two cannot drift.

    python -m codegen.release compatibility <schema-dir>

says whether the acp-schema built from `<schema-dir>` installs next to the acpwire built from
schema/, and what to do when it does not (`nox -s dist` prints it).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

from codegen.lock import LockMismatch, SchemaLock, read_lock

BINDINGS_REVISION = 1

ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTIONS = ROOT / "distributions"
SHARED_FILES = ("LICENSE", "CHANGELOG.md")
RUNTIME_PACKAGE = ROOT / "runtime" / "acpwire"
# The file acpwire's build hook reads its acp-schema requirement from.
REQUIREMENT_FILE = "acp-schema-requirement.txt"
# In distributions/acpwire/README.md: replaced by the requirement when the project is staged.
REQUIREMENT_MARKER = "@ACP_SCHEMA_REQUIREMENT@"
_VERSION_LINE = re.compile(r"""^__version__ = ["']([^"']+)["']""", re.MULTILINE)

_RELEASE = re.compile(r"(\d+)\.(\d+)\.(\d+)(?:\+([A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*))?")
RELEASE_FORMS = (
    "MAJOR.MINOR.PATCH (an npm release) or MAJOR.MINOR.PATCH+LABEL (a snapshot: the npm release it "
    "builds on, then a label such as main.b7f0005)"
)


class ReleaseError(Exception):
    """A schema release that cannot be turned into a package version."""


def _parse(release: str) -> tuple[int, int, int, str | None]:
    match = _RELEASE.fullmatch(release)
    if match is None:
        raise ReleaseError(
            f"schema release {release!r} is not {RELEASE_FORMS}; acp-schema versions are "
            "<release>.<bindings revision>[+label] and need one of these forms"
        )
    major, minor, patch, label = match.groups()
    return int(major), int(minor), int(patch), label


def local_label(release: str) -> str | None:
    """'2.4.0+Main_b7f0005' -> 'main.b7f0005' (PEP 440's normal form); None for an npm release."""
    label = _parse(release)[3]
    return None if label is None else re.sub(r"[-_]", ".", label.lower())


def schema_package_version(release: str, revision: int = BINDINGS_REVISION) -> str:
    """The acp-schema version of bindings generated from `release`.

    '2.4.0' -> '2.4.0.<revision>'; a snapshot '2.4.0+main.b7f0005' -> '2.4.0.<revision>+main.b7f0005'.
    """
    major, minor, patch, _ = _parse(release)
    label = local_label(release)
    return f"{major}.{minor}.{patch}.{revision}" + (f"+{label}" if label else "")


def runtime_requirement(release: str, revision: int = BINDINGS_REVISION) -> str:
    """The acp-schema requirement of an acpwire tested against bindings of `release`."""
    major, minor, patch, _ = _parse(release)
    return f"acp-schema>={major}.{minor}.{patch}.{revision},<{major}.{minor + 1}"


def runtime_accepts(runtime_release: str, bindings_release: str) -> bool:
    """Whether the acpwire built against `runtime_release` installs next to the acp-schema of
    `bindings_release` (both at BINDINGS_REVISION): `runtime_requirement` spelled out. A local
    label plays no part, as in every PEP 440 version specifier."""
    major, minor, patch, _ = _parse(runtime_release)
    b_major, b_minor, b_patch, _ = _parse(bindings_release)
    return (b_major, b_minor) == (major, minor) and b_patch >= patch


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
    """The acpwire project: runtime/acpwire plus its acp-schema requirement from the lock, in
    the metadata (REQUIREMENT_FILE, read by the build hook) and in the README."""
    _copy_project_files("acpwire", build_dir)
    shutil.copytree(
        RUNTIME_PACKAGE, build_dir / "acpwire", ignore=shutil.ignore_patterns("__pycache__")
    )
    requirement = runtime_requirement(read_lock(schema_dir).release)
    (build_dir / REQUIREMENT_FILE).write_text(requirement + "\n")
    readme = build_dir / "README.md"
    text = readme.read_text()
    if REQUIREMENT_MARKER not in text:
        raise ReleaseError(
            f"{DISTRIBUTIONS / 'acpwire' / 'README.md'} has no {REQUIREMENT_MARKER}: the line "
            "naming acpwire's acp-schema requirement must be written from the lock"
        )
    readme.write_text(text.replace(REQUIREMENT_MARKER, f"`{requirement}`"))


def runtime_version() -> str:
    """acpwire's `__version__`, read from the file the wheel's build reads it from
    (`[tool.hatch.version] path` in distributions/acpwire/pyproject.toml)."""
    project = tomllib.loads((DISTRIBUTIONS / "acpwire" / "pyproject.toml").read_text())
    staged_path = Path(project["tool"]["hatch"]["version"]["path"])  # acpwire/...
    source = RUNTIME_PACKAGE.joinpath(*staged_path.parts[1:])
    match = _VERSION_LINE.search(source.read_text())
    if match is None:
        raise ReleaseError(f"no __version__ line in {source}")
    return match[1]


def compatibility(bindings: SchemaLock, runtime: SchemaLock, acpwire_version: str) -> str:
    """Whether bindings generated from `bindings` install next to the acpwire built against
    `runtime` (schema/), and what to do when they do not."""
    version = schema_package_version(bindings.release)
    lines = [
        f"acpwire {acpwire_version} requires {runtime_requirement(runtime.release)} "
        f"(tested against {runtime.origin})."
    ]
    wheel = f"acp-schema {version} ({bindings.origin})"
    if not runtime_accepts(runtime.release, bindings.release):
        lines.append(
            f"{wheel} is outside that range: pip refuses to install the two together "
            "('conflicting dependencies', ResolutionImpossible). Use these bindings on their "
            "own (acp_schema needs msgspec only), or build an acpwire for them: vendor them "
            "into schema/ (`nox -s update_schema -- ...`), run `nox -s tests`, then "
            "`nox -s dist`. `pip install --no-deps` installs them anyway, untested."
        )
        return "\n".join(lines)
    lines.append(f"{wheel} is inside that range: pip installs the two together.")
    label = local_label(bindings.release)
    if bindings.source != runtime.source:
        lines.append(
            f"acpwire was not tested against {bindings.origin}"
            + (f" (version specifiers ignore the local label +{label})" if label else "")
            + ": where they drop or rename a type acpwire uses, acpwire fails at import. Run "
            "the tests on them first (vendor them into schema/ with `nox -s update_schema -- "
            "...`, then `nox -s tests`)."
        )
    if label:
        lines.append(f"{version} is a local version: for local use, PyPI refuses to upload it.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen.release", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    schema_cmd = commands.add_parser("stage-schema", help="stage the acp-schema project")
    schema_cmd.add_argument("schema_dir", type=Path)
    schema_cmd.add_argument("build_dir", type=Path)
    runtime_cmd = commands.add_parser("stage-runtime", help="stage the acpwire project")
    runtime_cmd.add_argument("build_dir", type=Path)
    compat_cmd = commands.add_parser(
        "compatibility", help="which acpwire the bindings of a schema dir install next to"
    )
    compat_cmd.add_argument("schema_dir", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "stage-schema":
            stage_schema(args.schema_dir.resolve(), args.build_dir.resolve())
        elif args.command == "stage-runtime":
            stage_runtime(args.build_dir.resolve())
        else:
            runtime = read_lock(ROOT / "schema")
            print(compatibility(read_lock(args.schema_dir), runtime, runtime_version()))
            return 0
    except (ReleaseError, LockMismatch, subprocess.CalledProcessError) as exc:
        print(f"codegen.release: {exc}", file=sys.stderr)
        return 1
    print(f"staged {args.build_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
