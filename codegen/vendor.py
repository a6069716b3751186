"""Vendor the ACP JSON Schema, from an npm release of the SDK or a snapshot, and report what changed.

    python -m codegen.vendor update <npm-version> [--package NAME] [--schema-dir schema]
    python -m codegen.vendor update --from PATH [--rev REF] --release X.Y.Z+LABEL [--schema-dir schema]
        (either update also takes --compare-with DIR: report against DIR, not the schema dir)
    python -m codegen.vendor fetch <npm-version> <dest-dir> [--package NAME]
    python -m codegen.vendor fetch --from PATH [--rev REF] --release X.Y.Z+LABEL <dest-dir>
    python -m codegen.vendor report <old-dir> <new-dir>

`update <npm-version>` packs `<package>@<version>` with npm, checks the tarball against the
registry's integrity hash, copies the schema files it ships under `package/schema/` into the
schema dir, rewrites the lock and prints a change report (computed before anything is
overwritten). `update --from` does the same with schema files that were never published as an
npm release (the protocol repository's main branch, a fork, a draft PR): a directory holding
v1/ and v2/ (or a checkout whose schema/ holds them), or with `--rev` the `schema/` of that
revision of a git repository (checkout or bare clone); `--release` is the label the bindings
go by (the npm release the snapshot builds on, then a label: `2.4.0+main.b7f0005` gives
acp-schema `2.4.0.<revision>+main.b7f0005`; codegen/release.py says why), recorded in the lock
with the path, ref and commit. `fetch` does either into a new directory (for building another
release's bindings, schema/ untouched) and prints the report against schema/. `report`
compares two schema dirs and writes nothing.

The report starts with the release line (old -> new lock, with the acp-schema versions); when
only the release label changes, it says so instead of listing every file as unchanged.

The report functions are pure (`schema_report`, `format_reports`, ...) so they
can be used without npm.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from codegen.classify import ShapeError, classify
from codegen.lock import (
    SCHEMA_FILES,
    LockMismatch,
    NpmRelease,
    SchemaLock,
    Source,
    read_lock,
    write_lock,
)
from codegen.patch_semantics import schema_patch_fields
from codegen.release import RELEASE_FORMS, ReleaseError, schema_package_version
from codegen.sources import SourceError, read_snapshot

DEFAULT_PACKAGE = "@agentclientprotocol/sdk"
PACKAGE_SCHEMA_DIR = PurePosixPath("package/schema")
WRAP_WIDTH = 100

MESSAGE_KINDS = ("Request", "Response", "Notification")
# Keywords whose values map names (not keywords) to subschemas.
NAME_MAP_KEYS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})

Schema = Mapping[str, Any]


class VendorError(Exception):
    """Fetching or installing the schema files failed."""


# --- report model -----------------------------------------------------------


@dataclass(frozen=True)
class Section:
    """Names added / removed / changed for one aspect of a schema.

    `docs_only` is the subset of `changed` whose only differences are descriptions.
    """

    title: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    docs_only: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


@dataclass(frozen=True)
class Report:
    """The change report for one schema file."""

    name: str
    sections: tuple[Section, ...]
    note: str = ""

    @property
    def is_empty(self) -> bool:
        return all(section.is_empty for section in self.sections)

    def section(self, title: str) -> Section:
        for section in self.sections:
            if section.title == title:
                return section
        raise KeyError(title)


DEFS = "$defs"
METHODS = "methods"
VARIANTS = "union variants"
THREE_STATE = "three-state fields"
RENAMED = "renamed $defs"
MOVED = "moved between stable and unstable"
CLASS_NAMES = "variant class names"
UNPINNED = "variant names not in codegen/names.py"


# --- extracting comparable facts from one schema ----------------------------


def defs_of(schema: Schema) -> Mapping[str, Any]:
    defs = schema.get("$defs", {})
    return defs if isinstance(defs, Mapping) else {}


def message_kind(def_name: str) -> str:
    """'PromptRequest' -> 'request'; a name without a known suffix is its own kind."""
    for kind in MESSAGE_KINDS:
        if def_name.endswith(kind):
            return kind.lower()
    return def_name


def methods_of(schema: Schema) -> set[tuple[str, str, str]]:
    """(x-side, x-method, kind) for every $def annotated with x-method."""
    found: set[tuple[str, str, str]] = set()
    for name, body in defs_of(schema).items():
        if isinstance(body, Mapping) and "x-method" in body:
            side = str(body.get("x-side", "?"))
            found.add((side, str(body["x-method"]), message_kind(name)))
    return found


def union_members(body: Mapping[str, Any]) -> Iterator[Any]:
    for key in ("anyOf", "oneOf"):
        members = body.get(key, [])
        if isinstance(members, list):
            yield from members


def discriminator_value(member: Any) -> str | None:
    """The const of the first property of `member` that holds one, if any."""
    if not isinstance(member, Mapping):
        return None
    properties = member.get("properties", {})
    if not isinstance(properties, Mapping):
        return None
    for prop in properties.values():
        if isinstance(prop, Mapping) and "const" in prop:
            return str(prop["const"])
    return None


def variants_of(schema: Schema) -> set[str]:
    """'Union.tag' for every discriminated member of every anyOf/oneOf $def."""
    found: set[str] = set()
    for name, body in defs_of(schema).items():
        if not isinstance(body, Mapping):
            continue
        for member in union_members(body):
            value = discriminator_value(member)
            if value is not None:
                found.add(f"{name}.{value}")
    return found


def three_state_fields_of(schema: Schema) -> set[str]:
    """'Type.field' for every field the schema's descriptions give patch semantics."""
    return {
        f"{type_name}.{field}"
        for type_name, fields in schema_patch_fields(schema).items()
        for field in fields
    }


# --- comparing two schemas --------------------------------------------------


def set_section(title: str, old: Iterable[str], new: Iterable[str]) -> Section:
    old_set, new_set = set(old), set(new)
    return Section(title, tuple(sorted(new_set - old_set)), tuple(sorted(old_set - new_set)))


def without_descriptions(node: Any, names: bool = False) -> Any:
    """A copy of a schema node without `description` keywords (property names are kept)."""
    if isinstance(node, Mapping):
        if names:
            return {key: without_descriptions(value) for key, value in node.items()}
        return {
            key: without_descriptions(value, key in NAME_MAP_KEYS)
            for key, value in node.items()
            if key != "description"
        }
    if isinstance(node, list):
        return [without_descriptions(item) for item in node]
    return node


def defs_section(old: Schema, new: Schema) -> Section:
    old_defs, new_defs = defs_of(old), defs_of(new)
    common = old_defs.keys() & new_defs.keys()
    changed = tuple(sorted(name for name in common if old_defs[name] != new_defs[name]))
    docs_only = tuple(
        name
        for name in changed
        if without_descriptions(old_defs[name]) == without_descriptions(new_defs[name])
    )
    base = set_section(DEFS, old_defs.keys(), new_defs.keys())
    return Section(DEFS, base.added, base.removed, changed, docs_only)


def renamed_section(old: Schema, new: Schema) -> Section:
    """'Old -> New' for each removed $def whose body (descriptions aside) is that of exactly one
    added $def."""
    old_defs, new_defs = defs_of(old), defs_of(new)
    added = [name for name in new_defs if name not in old_defs]
    pairs = []
    for name in sorted(old_defs.keys() - new_defs.keys()):
        body = without_descriptions(old_defs[name])
        same = [other for other in added if without_descriptions(new_defs[other]) == body]
        if len(same) == 1:
            pairs.append(f"{name} -> {same[0]}")
    return Section(RENAMED, changed=tuple(pairs))


def moved_section(
    old_stable: Schema, old_unstable: Schema, new_stable: Schema, new_unstable: Schema
) -> Section:
    """$defs that left the stable file for the unstable one only (removed), and unstable-only
    $defs that became stable (added)."""
    old_s, old_u = defs_of(old_stable).keys(), defs_of(old_unstable).keys()
    new_s, new_u = defs_of(new_stable).keys(), defs_of(new_unstable).keys()
    stabilized = sorted((new_s - old_s) & (old_u - old_s))
    to_unstable = sorted((old_s - new_s) & (new_u - new_s))
    return Section(
        MOVED,
        tuple(f"{name} (was unstable only)" for name in stabilized),
        tuple(f"{name} (now unstable only)" for name in to_unstable),
    )


def describe_methods(triples: set[tuple[str, str, str]]) -> tuple[str, ...]:
    """Group (side, method, kind) into readable 'side:method (kind+kind)' entries."""
    kinds: dict[str, list[str]] = {}
    for side, method, kind in sorted(triples):
        kinds.setdefault(f"{side}:{method}", []).append(kind)
    return tuple(f"{method} ({'+'.join(ks)})" for method, ks in sorted(kinds.items()))


def methods_section(old: Schema, new: Schema) -> Section:
    old_methods, new_methods = methods_of(old), methods_of(new)
    return Section(
        METHODS,
        describe_methods(new_methods - old_methods),
        describe_methods(old_methods - new_methods),
    )


def variant_classes(schema: Schema, version: str, unstable: bool) -> dict[str, str]:
    """'Union.tag' -> the class the generator names that variant ('Union.*': the catch-all),
    and the variants names.py does not pin as 'Union.tag -> Class'. Raises ShapeError when
    the schema does not generate."""
    if not schema:
        return {}
    module = classify(schema, version=version, unstable=unstable, source="", sha256="")
    structs = {s.name: s for s in module.structs}
    found: dict[str, str] = {}
    for union in module.unions:
        for variant in union.variants:
            found[f"{union.name}.{structs[variant].tag_value}"] = variant
        for title, default in union.named_defaults:
            found[f"{union.name}.{title}"] = default
        if union.unknown is not None:
            found[f"{union.name}.*"] = union.unknown.name
    for union_name, tag, class_name in module.unpinned:
        found[f"{union_name}.{tag} -> {class_name}"] = UNPINNED
    return found


def names_sections(old: Schema, new: Schema, version: str, unstable: bool) -> tuple[Section, ...]:
    """New and removed variant classes, renames (a wire variant whose class name changes), and
    the new schema's variants that names.py does not pin."""
    try:
        old_classes = variant_classes(old, version, unstable)
    except ShapeError:
        old_classes = {}  # a release codegen never generated: every name is new
    try:
        new_classes = variant_classes(new, version, unstable)
    except ShapeError as exc:
        failed = () if not old_classes else (f"codegen fails on the new schema: {exc}",)
        return Section(CLASS_NAMES, changed=failed), Section(UNPINNED)
    old_names = {n: k for k, n in old_classes.items() if n != UNPINNED}
    new_names = {n: k for k, n in new_classes.items() if n != UNPINNED}
    renamed = tuple(
        sorted(
            f"{key}: {old_classes[key]} -> {new_classes[key]}"
            for key in old_classes.keys() & new_classes.keys()
            if old_classes[key] != new_classes[key]
        )
    )
    return (
        Section(
            CLASS_NAMES,
            tuple(sorted(f"{n} ({k})" for n, k in new_names.items() if n not in old_names)),
            tuple(sorted(f"{n} ({k})" for n, k in old_names.items() if n not in new_names)),
            renamed,
        ),
        Section(UNPINNED, tuple(sorted(k for k, n in new_classes.items() if n == UNPINNED))),
    )


def schema_report(
    old: Schema, new: Schema, version: str, name: str = "", unstable: bool = False
) -> Report:
    """Compare two parsed schema files of protocol `version` ('v1' / 'v2')."""
    sections = (
        defs_section(old, new),
        renamed_section(old, new),
        methods_section(old, new),
        set_section(VARIANTS, variants_of(old), variants_of(new)),
        set_section(THREE_STATE, three_state_fields_of(old), three_state_fields_of(new)),
        *names_sections(old, new, version, unstable),
    )
    return Report(name or version, sections)


def version_of(file_name: str) -> str:
    """'v2/schema.unstable.json' -> 'v2'."""
    return PurePosixPath(file_name).parts[0]


def load_schema(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def presence_note(old: object, new: object) -> str:
    if old is None and new is None:
        return "absent in both"
    if old is None:
        return "new file"
    if new is None:
        return "file removed"
    return ""


def dir_reports(old_dir: Path, new_dir: Path) -> list[Report]:
    """One report per SCHEMA_FILES entry; a missing file compares as an empty schema. A stable
    file's report also lists the $defs that moved between it and its unstable file."""
    reports = []
    for file_name in SCHEMA_FILES:
        old = load_schema(old_dir / file_name)
        new = load_schema(new_dir / file_name)
        unstable = file_name.endswith(".unstable.json")
        report = schema_report(old or {}, new or {}, version_of(file_name), file_name, unstable)
        sections = report.sections
        if not unstable:
            unstable_name = file_name.replace(".json", ".unstable.json")
            old_u = load_schema(old_dir / unstable_name) or {}
            new_u = load_schema(new_dir / unstable_name) or {}
            sections += (moved_section(old or {}, old_u, new or {}, new_u),)
        reports.append(Report(report.name, sections, presence_note(old, new)))
    return reports


# --- formatting -------------------------------------------------------------


def wrap_items(label: str, items: Sequence[str], indent: str = "    ") -> list[str]:
    """`label: a, b, c` wrapped at WRAP_WIDTH without splitting an item."""
    lead = f"{indent}{label}: "
    pieces = [item + "," for item in items[:-1]] + list(items[-1:])
    rows: list[str] = []
    current = ""
    for piece in pieces:
        if current and len(lead) + len(current) + 1 + len(piece) > WRAP_WIDTH:
            rows.append(current)
            current = ""
        current = f"{current} {piece}" if current else piece
    rows.append(current)
    pad = " " * len(lead)
    return [lead + rows[0], *(pad + row for row in rows[1:])]


def format_section(section: Section) -> list[str]:
    if section.is_empty:
        return [f"  {section.title}: no changes"]
    counts = f"+{len(section.added)} -{len(section.removed)}"
    if section.title == DEFS:
        counts += f" ~{len(section.changed)} ({len(section.docs_only)} docs only)"
    elif section.changed:
        changed = f"~{len(section.changed)}"
        counts = f"{counts} {changed}" if section.added or section.removed else changed
    structural = tuple(name for name in section.changed if name not in section.docs_only)
    lines = [f"  {section.title}: {counts}"]
    for label, items in (
        ("added", section.added),
        ("removed", section.removed),
        ("changed", structural),
        ("docs only", section.docs_only),
    ):
        if items:
            lines.extend(wrap_items(label, items))
    return lines


def format_report(report: Report) -> str:
    header = report.name + (f" ({report.note})" if report.note else "")
    if report.is_empty:
        return f"{header}: no changes"
    lines = [f"{header}:"]
    for section in report.sections:
        lines.extend(format_section(section))
    return "\n".join(lines)


def format_reports(reports: Iterable[Report]) -> str:
    return "\n".join(format_report(report) for report in reports)


# --- fetching and installing ------------------------------------------------


def npm_pack(package: str, version: str, dest: Path) -> Path:
    """Run `npm pack` for package@version into dest and return the tarball."""
    command = [
        "npm",
        "pack",
        "--silent",
        "--ignore-scripts",
        "--pack-destination",
        str(dest),
        f"{package}@{version}",
    ]
    try:
        subprocess.run(command, cwd=dest, check=True, capture_output=True, text=True)
    except FileNotFoundError as exc:
        raise VendorError("npm not found on PATH") from exc
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or exc.stdout or "").strip() or "no output (--silent)"
        raise VendorError(
            f"`{' '.join(command)}` exited with {exc.returncode}: {detail}; "
            f"does {package}@{version} exist?"
        ) from exc
    tarballs = sorted(dest.glob("*.tgz"))
    if len(tarballs) != 1:
        raise VendorError(f"expected one tarball from npm pack in {dest}, found {len(tarballs)}")
    return tarballs[0]


def extract_tarball(tarball: Path, dest: Path) -> Path:
    """Extract with the 'data' filter (no absolute paths, links out, devices...)."""
    with tarfile.open(tarball, "r:gz") as archive:
        archive.extractall(dest, filter="data")
    return dest


def packaged_schema_dir(extracted: Path, label: str) -> Path:
    """The package's schema dir, after checking every SCHEMA_FILES entry is in it."""
    schema_dir = extracted / PACKAGE_SCHEMA_DIR
    missing = [name for name in SCHEMA_FILES if not (schema_dir / name).is_file()]
    if missing:
        raise VendorError(
            f"{label} does not ship {', '.join(f'{PACKAGE_SCHEMA_DIR}/{m}' for m in missing)}; "
            f"bindings need all of {', '.join(SCHEMA_FILES)} "
            "(@agentclientprotocol/sdk ships them from 2.0.0 on)"
        )
    return schema_dir


def install_schema_files(source_dir: Path, schema_dir: Path) -> None:
    for name in SCHEMA_FILES:
        target = schema_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source_dir / name, target)


def registry_integrity(package: str, version: str) -> str:
    """The registry's Subresource Integrity string for package@version ('sha512-...')."""
    command = ["npm", "view", "--json", f"{package}@{version}", "dist.integrity"]
    try:
        result = subprocess.run(command, check=True, capture_output=True, text=True)
    except (FileNotFoundError, subprocess.CalledProcessError) as exc:
        raise VendorError(f"`{' '.join(command)}` failed: {exc}") from exc
    integrity = json.loads(result.stdout) if result.stdout.strip() else None
    if not isinstance(integrity, str) or not integrity.startswith("sha512-"):
        raise VendorError(f"the registry has no sha512 integrity for {package}@{version}")
    return integrity


def tarball_integrity(tarball: Path) -> str:
    digest = hashlib.sha512(tarball.read_bytes()).digest()
    return "sha512-" + base64.b64encode(digest).decode("ascii")


def verify_integrity(tarball: Path, expected: str) -> None:
    actual = tarball_integrity(tarball)
    if actual != expected:
        raise VendorError(
            f"{tarball.name}: integrity {actual} does not match the registry's {expected}; "
            "clear the npm cache (`npm cache clean --force`) and retry"
        )


@dataclass(frozen=True)
class Update:
    """What vendoring did: the lock it replaced (None: there was none), the new one, and the
    change report of the schema files."""

    previous: SchemaLock | None
    lock: SchemaLock
    reports: list[Report]

    def format(self) -> str:
        """The release line, then the change report; files identical to the previous ones
        are said to be so (only the release label changed), not listed as 'no changes'."""
        lines = [f"release: {release_change(self.previous, self.lock)}"]
        if self.previous is not None and self.previous.files == self.lock.files:
            if self.previous.source == self.lock.source:
                lines.append("schema files: unchanged")
            else:
                lines.append(
                    "schema files: identical, byte for byte, to the ones they replace; "
                    "only the release label (and so the acp-schema version) changes"
                )
            return "\n".join(lines)
        return "\n".join([*lines, format_reports(self.reports)])


def release_change(previous: SchemaLock | None, lock: SchemaLock) -> str:
    """'@pkg@2.3.0 -> @pkg@2.4.0 (acp-schema 2.3.0.1 -> 2.4.0.1)', or one side when unchanged."""

    def named(entry: SchemaLock) -> str:
        try:
            return f"{entry.origin} (acp-schema {schema_package_version(entry.release)})"
        except ReleaseError:
            return f"{entry.origin} (no acp-schema version: {RELEASE_FORMS} needed)"

    if previous is None:
        return f"{named(lock)}, no previous lock"
    if previous.source == lock.source:
        return f"unchanged, {named(lock)}"
    return f"{named(previous)} -> {named(lock)}"


def previous_lock(schema_dir: Path) -> SchemaLock | None:
    try:
        return read_lock(schema_dir)
    except (LockMismatch, ValueError, KeyError):
        return None  # no lock, or not one we can read: every file is reported as it is


def install(
    source_dir: Path, source: Source, schema_dir: Path, compare_with: Path | None = None
) -> Update:
    """Copy the schema files of `source_dir` into schema_dir and lock them as `source`.

    The report compares with `compare_with` (default: schema_dir as it was)."""
    old_dir = compare_with or schema_dir
    previous = previous_lock(old_dir)
    reports = dir_reports(old_dir, source_dir)
    install_schema_files(source_dir, schema_dir)
    return Update(previous, write_lock(schema_dir, source), reports)


def install_release(
    version: str,
    schema_dir: Path,
    package: str = DEFAULT_PACKAGE,
    compare_with: Path | None = None,
) -> Update:
    """Pack package@version, verify it, copy its schema files into schema_dir and lock them."""
    with tempfile.TemporaryDirectory(prefix="acp-vendor-") as tmp:
        tmp_dir = Path(tmp)
        pack_dir, extract_dir = tmp_dir / "pack", tmp_dir / "extract"
        pack_dir.mkdir()
        extract_dir.mkdir()
        tarball = npm_pack(package, version, pack_dir)
        verify_integrity(tarball, registry_integrity(package, version))
        source_dir = packaged_schema_dir(extract_tarball(tarball, extract_dir), tarball.name)
        return install(source_dir, NpmRelease(package, version), schema_dir, compare_with)


def install_snapshot(
    path: Path, rev: str | None, release: str, schema_dir: Path, compare_with: Path | None = None
) -> Update:
    """A snapshot's schema files (a directory, or git revision `rev` of repository `path`)
    copied into schema_dir and locked under the release label `release`."""
    try:
        snapshot = read_snapshot(path, rev, release)
    except (SourceError, ReleaseError) as exc:
        raise VendorError(str(exc)) from exc
    with tempfile.TemporaryDirectory(prefix="acp-snapshot-") as tmp:
        for name, data in snapshot.contents.items():
            (Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / name).write_bytes(data)
        return install(Path(tmp), snapshot.lock.source, schema_dir, compare_with)


def update(version: str, schema_dir: Path, package: str = DEFAULT_PACKAGE) -> Update:
    """Vendor package@version into schema_dir, rewrite the lock, return what changed."""
    return install_release(version, schema_dir, package)


def fresh_dir(dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    return dest


def fetch(
    version: str, dest: Path, package: str = DEFAULT_PACKAGE, compare_with: Path = Path("schema")
) -> Update:
    """package@version's schema files, verified and locked, into a new directory `dest`."""
    return install_release(version, fresh_dir(dest), package, compare_with)


# --- CLI --------------------------------------------------------------------


def compare_dirs(old_dir: Path, new_dir: Path) -> list[Report]:
    for directory in (old_dir, new_dir):
        if not directory.is_dir():
            raise VendorError(f"{directory} is not a directory")
    return dir_reports(old_dir, new_dir)


def add_source_arguments(command: argparse.ArgumentParser) -> None:
    """An npm version (`version`, `--package`) or a snapshot (`--from`, `--rev`, `--release`)."""
    command.add_argument("version", nargs="?", help="npm version of the package, e.g. 2.4.0")
    command.add_argument("--package", help=f"the npm package (default {DEFAULT_PACKAGE})")
    snapshot = command.add_argument_group(
        "a snapshot instead of an npm release (files never published as one)"
    )
    snapshot.add_argument(
        "--from",
        dest="snapshot",
        type=Path,
        metavar="PATH",
        help="a dir holding v1/ and v2/ (or a checkout whose schema/ does); with --rev a git repo",
    )
    snapshot.add_argument("--rev", help="read PATH's schema/ at this git revision")
    snapshot.add_argument(
        "--release", help="the snapshot's release label, X.Y.Z+LABEL (e.g. 2.4.0+main.b7f0005)"
    )


def check_source_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.snapshot is None:
        if args.version is None:
            parser.error("give an npm version (e.g. 2.4.0), or --from PATH --release X.Y.Z+LABEL")
        if args.rev is not None or args.release is not None:
            parser.error("--rev and --release go with --from (a snapshot), not an npm version")
        return
    if args.version is not None:
        parser.error(f"give an npm version ({args.version}) or --from, not both")
    if args.package is not None:
        parser.error("--package names an npm package; --from reads files, not a package")
    if args.release is None:
        parser.error(
            "--from needs --release X.Y.Z+LABEL: the npm release the snapshot builds on, then "
            "a label (e.g. 2.4.0+main.b7f0005); it becomes the acp-schema version"
        )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m codegen.vendor",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)

    update_cmd = commands.add_parser(
        "update", help="vendor the schema files of an npm release or a snapshot into schema/"
    )
    add_source_arguments(update_cmd)
    update_cmd.add_argument("--schema-dir", type=Path, default=Path("schema"))
    update_cmd.add_argument(
        "--compare-with",
        type=Path,
        metavar="DIR",
        help="report against DIR (default: --schema-dir)",
    )

    fetch_cmd = commands.add_parser(
        "fetch", help="fetch and lock an npm release's or a snapshot's schema files into a new dir"
    )
    add_source_arguments(fetch_cmd)
    fetch_cmd.add_argument("dest", type=Path)

    report_cmd = commands.add_parser("report", help="compare two schema dirs, write nothing")
    report_cmd.add_argument("old_dir", type=Path)
    report_cmd.add_argument("new_dir", type=Path)
    return parser


def vendor_into(args: argparse.Namespace, schema_dir: Path, compare_with: Path | None) -> Update:
    if args.snapshot is not None:
        return install_snapshot(args.snapshot, args.rev, args.release, schema_dir, compare_with)
    return install_release(args.version, schema_dir, args.package or DEFAULT_PACKAGE, compare_with)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in ("update", "fetch"):
        check_source_arguments(parser, args)
    try:
        if args.command == "update":
            done = vendor_into(args, args.schema_dir, args.compare_with)
            print(f"vendored {done.lock.origin} into {args.schema_dir}")
        elif args.command == "fetch":
            done = vendor_into(args, fresh_dir(args.dest), Path("schema"))
            print(f"fetched {done.lock.origin} into {args.dest}; compared with schema/:")
        else:
            print(format_reports(compare_dirs(args.old_dir, args.new_dir)))
            return 0
    except VendorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(done.format())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
