"""The two distributions: version scheme, the runtime's acp-schema range, staged projects and
published metadata. (`nox -s dist smoke` builds the wheels and runs them in a clean venv.)"""

from __future__ import annotations

import hashlib
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import acp_schema
import acpwire
from codegen.lock import NpmRelease, SchemaLock, Snapshot, read_lock
from codegen.release import (
    BINDINGS_REVISION,
    REQUIREMENT_FILE,
    REQUIREMENT_MARKER,
    ReleaseError,
    compatibility,
    runtime_accepts,
    runtime_requirement,
    runtime_version,
    schema_package_version,
    stage_runtime,
    stage_schema,
)
from helpers.paths import ROOT

DISTRIBUTIONS = ROOT / "distributions"
# sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt
APACHE_2_0_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
# hatchling's default pattern for `[tool.hatch.version] path = ...`
HATCH_VERSION = re.compile(
    r"""(?i)^(__version__|VERSION) *= *(['"])v?(?P<version>.+?)\2""", re.MULTILINE
)


def pyproject(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads(path.read_text())
    return data


# --- versions -----------------------------------------------------------------


def test_schema_version_is_release_dot_revision() -> None:
    assert schema_package_version("2.4.0", 3) == "2.4.0.3"
    assert schema_package_version("10.0.12", 0) == "10.0.12.0"


def test_one_release_with_every_bindings_fix_is_one_specifier() -> None:
    pin = SpecifierSet("==2.4.0.*")
    assert {
        str(v) for v in map(Version, ["2.4.0.0", "2.4.0.7", "2.4.1.0", "2.4.0"]) if v in pin
    } == {
        "2.4.0.0",
        "2.4.0.7",
        "2.4.0",
    }
    assert Version(schema_package_version("2.4.0", 7)) > Version(schema_package_version("2.4.0", 6))


def test_runtime_requirement_spans_the_tested_minor_release() -> None:
    requirement = runtime_requirement("2.4.0", 2)
    assert requirement == "acp-schema>=2.4.0.2,<2.5"
    accepted = SpecifierSet(requirement.removeprefix("acp-schema"))
    assert [v in accepted for v in ("2.4.0.1", "2.4.0.2", "2.4.3.0", "2.5.0.0")] == [
        False,
        True,
        True,
        False,
    ]


@pytest.mark.parametrize(
    ("release", "version"),
    [
        ("2.4.0+main.b7f0005", "2.4.0.3+main.b7f0005"),
        ("2.4.0+Fork_PR-12.abc", "2.4.0.3+fork.pr.12.abc"),  # PEP 440's normal form
    ],
)
def test_a_snapshot_label_becomes_a_local_version(release: str, version: str) -> None:
    assert schema_package_version(release, 3) == version
    assert str(Version(version)) == version  # valid and normalised PEP 440
    assert Version(version) > Version("2.4.0.3") and Version(version) < Version("2.4.0.4")
    # specifiers ignore local labels: it installs next to the acpwire of 2.4.0
    assert Version(version) in SpecifierSet(
        runtime_requirement("2.4.0", 3).removeprefix("acp-schema")
    )
    assert runtime_requirement(release, 3) == runtime_requirement("2.4.0", 3)


@pytest.mark.parametrize("runtime", ["2.4.0", "2.4.3", "3.0.0", "2.4.0+main.x"])
@pytest.mark.parametrize(
    "bindings", ["2.3.9", "2.4.0", "2.4.1", "2.4.0+main.x", "2.5.0", "1.4.0", "3.0.0"]
)
def test_runtime_accepts_is_the_requirement_spelled_out(runtime: str, bindings: str) -> None:
    specifier = SpecifierSet(runtime_requirement(runtime).removeprefix("acp-schema"))
    assert runtime_accepts(runtime, bindings) is (
        Version(schema_package_version(bindings)) in specifier
    )


@pytest.mark.parametrize("release", ["2.5.0-beta.1", "2.5", "v2.5.0", "2.5.0.1", "2.5.0+"])
def test_a_release_that_is_not_major_minor_patch_has_no_version(release: str) -> None:
    with pytest.raises(ReleaseError, match=r"MAJOR\.MINOR\.PATCH"):
        schema_package_version(release)


def test_committed_bindings_carry_the_version_of_the_locked_release() -> None:
    lock = read_lock(ROOT / "schema")
    assert acp_schema.__version__ == f"{lock.release}.{BINDINGS_REVISION}"
    assert all(f"@{lock.release} " in source for source, _ in acp_schema.SCHEMA_RELEASES.values())


# --- staged projects ----------------------------------------------------------


def test_staged_schema_project_builds_the_generated_release(tmp_path: Path) -> None:
    build = tmp_path / "acp-schema"
    stage_schema(ROOT / "schema", build)

    init = (build / "acp_schema" / "__init__.py").read_text()
    match = HATCH_VERSION.search(init)
    assert match is not None and match["version"] == acp_schema.__version__
    assert (build / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    meta = pyproject(build / "pyproject.toml")
    assert meta["tool"]["hatch"]["version"]["path"] == "acp_schema/__init__.py"
    assert meta["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["acp_schema"]


def test_staged_runtime_project_requires_the_locked_release(tmp_path: Path) -> None:
    build = tmp_path / "acpwire"
    stage_runtime(build)

    lock = read_lock(ROOT / "schema")
    assert (build / REQUIREMENT_FILE).read_text() == runtime_requirement(lock.release) + "\n"
    assert (build / "acpwire" / "__init__.py").read_text() == (
        ROOT / "runtime" / "acpwire" / "__init__.py"
    ).read_text()
    meta = pyproject(build / "pyproject.toml")
    version_file = build / meta["tool"]["hatch"]["version"]["path"]
    match = HATCH_VERSION.search(version_file.read_text())
    assert match is not None and match["version"] == acpwire.__version__
    assert not list(build.rglob("__pycache__"))


def test_staged_runtime_readme_names_the_requirement_of_its_metadata(tmp_path: Path) -> None:
    """The README line is written from the same requirement as the wheel's dependency, so the
    two cannot drift; the source README holds the marker only."""
    source = (DISTRIBUTIONS / "acpwire" / "README.md").read_text()
    assert source.count(REQUIREMENT_MARKER) == 1
    assert "[trio](https://trio.readthedocs.io) and asyncio" in source
    assert "trio runtime" not in source
    build = tmp_path / "acpwire"
    stage_runtime(build)

    readme = (build / "README.md").read_text()
    requirement = (build / REQUIREMENT_FILE).read_text().strip()
    assert f"this one requires `{requirement}`" in " ".join(readme.split())
    assert REQUIREMENT_MARKER not in readme


# --- which acpwire installs next to which bindings ------------------------------


def lock(source: NpmRelease | Snapshot) -> SchemaLock:
    return SchemaLock(source, {})


SDK = "@agentclientprotocol/sdk"


def test_the_runtime_version_is_the_one_the_wheel_gets() -> None:
    assert runtime_version() == acpwire.__version__


def test_compatibility_of_the_bindings_acpwire_is_built_with() -> None:
    text = compatibility(lock(NpmRelease(SDK, "2.4.0")), lock(NpmRelease(SDK, "2.4.0")), "0.2.0")
    rev = BINDINGS_REVISION
    assert text.splitlines() == [
        f"acpwire 0.2.0 requires acp-schema>=2.4.0.{rev},<2.5 (tested against {SDK}@2.4.0).",
        f"acp-schema 2.4.0.{rev} ({SDK}@2.4.0) is inside that range: pip installs the two "
        "together.",
    ]


def test_compatibility_of_another_release_says_what_to_do() -> None:
    text = compatibility(lock(NpmRelease(SDK, "2.2.0")), lock(NpmRelease(SDK, "2.4.0")), "0.2.0")
    assert "is outside that range: pip refuses to install the two together" in text
    assert "ResolutionImpossible" in text and "`nox -s update_schema -- ...`" in text
    assert "pip install --no-deps" in text


def test_compatibility_of_a_snapshot_warns_it_is_untested_and_local() -> None:
    snapshot = Snapshot("2.4.0+main.b7f0005", "/src/acp", "main", "b7f0005")
    text = compatibility(lock(snapshot), lock(NpmRelease(SDK, "2.4.0")), "0.2.0")
    assert "is inside that range: pip installs the two together." in text
    assert "acpwire was not tested against snapshot 2.4.0+main.b7f0005 (git b7f0005)" in text
    assert "(version specifiers ignore the local label +main.b7f0005)" in text
    assert "acpwire fails at import" in text
    assert "PyPI refuses to upload it" in text


# --- published metadata -------------------------------------------------------


@pytest.mark.parametrize("name", ["acp-schema", "acpwire"])
def test_published_metadata_is_for_users(name: str) -> None:
    project = pyproject(DISTRIBUTIONS / name / "pyproject.toml")["project"]
    assert project["name"] == name
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    assert "optional-dependencies" not in project
    assert not [dep for dep in project.get("dependencies", []) if "==" in dep]
    classifiers = project["classifiers"]
    assert "Typing :: Typed" in classifiers
    minimum = project["requires-python"].removeprefix(">=")
    assert f"Programming Language :: Python :: {minimum}" in classifiers


def test_acp_schema_depends_on_msgspec_only() -> None:
    project = pyproject(DISTRIBUTIONS / "acp-schema" / "pyproject.toml")["project"]
    assert [re.split(r"[<>=!~ ]", dep)[0] for dep in project["dependencies"]] == ["msgspec"]


def test_development_project_is_not_published_and_has_no_pinned_extras() -> None:
    project = pyproject(ROOT / "pyproject.toml")["project"]
    assert "Private :: Do Not Upload" in project["classifiers"]
    assert "optional-dependencies" not in project
    assert not [dep for dep in project["dependencies"] if "==" in dep]


def test_license_is_the_standard_apache_2_0_text() -> None:
    assert hashlib.sha256((ROOT / "LICENSE").read_bytes()).hexdigest() == APACHE_2_0_SHA256


def test_changelog_has_an_entry_for_the_current_versions() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## acpwire {acpwire.__version__}, acp-schema {acp_schema.__version__}" in changelog
