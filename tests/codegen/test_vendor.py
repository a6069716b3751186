"""Tests for codegen.vendor's change report and for the schema lock. No network, no npm."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest

from codegen import vendor
from codegen.lock import (
    SCHEMA_FILES,
    LockMismatch,
    NpmRelease,
    read_lock,
    verify_lock,
    write_lock,
)
from codegen.release import BINDINGS_REVISION as REV
from codegen.vendor import (
    DEFS,
    METHODS,
    THREE_STATE,
    VARIANTS,
    Report,
    Section,
    VendorError,
    dir_reports,
    format_report,
    schema_report,
    without_descriptions,
)

NULLABLE_STR = {"type": ["string", "null"]}


def schema(**defs: Any) -> dict[str, Any]:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}


def message(side: str, method: str, description: str = "") -> dict[str, Any]:
    body: dict[str, Any] = {"type": "object", "x-side": side, "x-method": method}
    if description:
        body["description"] = description
    return body


def variant(tag: str, value: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {tag: {"type": "string", "const": value}},
        "required": [tag],
    }


# --- $defs ------------------------------------------------------------------


def test_defs_added_removed_changed() -> None:
    old = schema(Kept={"type": "string"}, Gone={"type": "integer"}, Edited={"type": "string"})
    new = schema(Kept={"type": "string"}, Edited={"type": "integer"}, Fresh={"type": "boolean"})

    section = schema_report(old, new, "v2").section(DEFS)

    assert section.added == ("Fresh",)
    assert section.removed == ("Gone",)
    assert section.changed == ("Edited",)
    assert section.docs_only == ()


def test_description_only_change_is_flagged_docs_only() -> None:
    old = schema(A={"type": "string", "description": "old"}, B={"type": "string"})
    new = schema(A={"type": "string", "description": "new"}, B={"type": "integer"})

    section = schema_report(old, new, "v2").section(DEFS)

    assert section.changed == ("A", "B")
    assert section.docs_only == ("A",)


def test_a_property_named_description_is_not_a_docs_change() -> None:
    old = {"properties": {"description": {"type": "string"}}, "description": "x"}
    new = {"properties": {}, "description": "y"}

    assert without_descriptions(old) == {"properties": {"description": {"type": "string"}}}
    assert without_descriptions(old) != without_descriptions(new)


# --- methods ----------------------------------------------------------------


def test_methods_added_and_removed_grouped_by_side_and_method() -> None:
    old = schema(
        PromptRequest=message("agent", "session/prompt"),
        PromptResponse=message("agent", "session/prompt"),
        LogoutRequest=message("agent", "logout"),
        LogoutResponse=message("agent", "logout"),
    )
    new = schema(
        PromptRequest=message("agent", "session/prompt", "docs changed, method did not"),
        PromptResponse=message("agent", "session/prompt"),
        ForkSessionRequest=message("agent", "session/fork"),
        ForkSessionResponse=message("agent", "session/fork"),
        StatusUpdateNotification=message("client", "auth/status_update"),
    )

    section = schema_report(old, new, "v2").section(METHODS)

    assert section.added == (
        "agent:session/fork (request+response)",
        "client:auth/status_update (notification)",
    )
    assert section.removed == ("agent:logout (request+response)",)


def test_a_new_message_kind_for_an_existing_method_is_reported() -> None:
    old = schema(SuccessorRequest=message("proxy", "proxy/successor"))
    new = schema(
        SuccessorRequest=message("proxy", "proxy/successor"),
        SuccessorNotification=message("proxy", "proxy/successor"),
    )

    section = schema_report(old, new, "v2").section(METHODS)

    assert section.added == ("proxy:proxy/successor (notification)",)
    assert section.removed == ()


def test_same_method_on_the_other_side_is_a_different_method() -> None:
    old = schema(MessageMcpRequest=message("client", "mcp/message"))
    new = schema(MessageMcpRequest=message("agent", "mcp/message"))

    section = schema_report(old, new, "v2").section(METHODS)

    assert section.added == ("agent:mcp/message (request)",)
    assert section.removed == ("client:mcp/message (request)",)


# --- union variants ---------------------------------------------------------


def test_union_variants_added_and_removed() -> None:
    old = schema(
        SessionUpdate={"anyOf": [variant("sessionUpdate", "plan"), {"type": "object"}]},
        Outcome={"oneOf": [variant("outcome", "cancelled"), variant("outcome", "selected")]},
    )
    new = schema(
        SessionUpdate={
            "anyOf": [
                variant("sessionUpdate", "plan_update"),
                variant("sessionUpdate", "agent_message_chunk"),
                {"type": "object"},
            ]
        },
        Outcome={"oneOf": [variant("outcome", "selected")]},
    )

    section = schema_report(old, new, "v2").section(VARIANTS)

    assert section.added == ("SessionUpdate.agent_message_chunk", "SessionUpdate.plan_update")
    assert section.removed == ("Outcome.cancelled", "SessionUpdate.plan")


def test_plain_enums_and_undiscriminated_unions_have_no_variants() -> None:
    old = schema(Kind={"anyOf": [{"type": "string", "const": "read"}]}, Id={"anyOf": []})
    new = schema(
        Kind={"anyOf": [{"type": "string", "const": "read"}, {"type": "string", "const": "edit"}]},
        Id={"anyOf": [{"type": "integer"}, {"type": "string"}]},
    )

    assert schema_report(old, new, "v2").section(VARIANTS).is_empty


# --- three-state fields -----------------------------------------------------
# Which fields are three-state is the schema's descriptions' say (tests/test_patch_semantics.py);
# the report lists the ones that change.

PATCH_TYPE_DOC = (
    "Only `id` is required. Other fields have patch semantics: omitted fields leave the stored "
    "value unchanged, `null` clears it, and concrete values replace it."
)


def test_three_state_fields_follow_the_descriptions() -> None:
    old = schema(
        Patch={
            "type": "object",
            "description": PATCH_TYPE_DOC,
            "properties": {"id": {"type": "string"}, "title": NULLABLE_STR},
            "required": ["id"],
        }
    )
    new = schema(
        Patch={
            "type": "object",
            "description": PATCH_TYPE_DOC,
            "properties": {
                "id": {"type": "string"},
                "kind": {"anyOf": [{"$ref": "#/$defs/Kind"}, {"type": "null"}]},
                "rawInput": {"description": "untyped: any JSON"},
                "count": {"type": "integer"},
            },
            "required": ["id"],
        }
    )

    section = schema_report(old, new, "v2").section(THREE_STATE)

    assert section.added == ("Patch.kind", "Patch.rawInput")
    assert section.removed == ("Patch.title",)


def test_a_field_described_as_patch_is_reported_on_its_own() -> None:
    cost = {
        **NULLABLE_STR,
        "description": "Omitted leaves the last reported cost unchanged. `null` clears it.",
    }
    usage = {"type": "object", "properties": {"cost": cost, "size": NULLABLE_STR}}
    old = schema(Usage={"type": "object", "properties": {"size": NULLABLE_STR}})
    new = schema(Usage=usage)

    assert schema_report(old, new, "v2").section(THREE_STATE).added == ("Usage.cost",)


def test_field_becoming_required_stops_being_three_state() -> None:
    patch = {
        "type": "object",
        "description": "All fields are optional to support partial updates.",
        "properties": {"title": NULLABLE_STR},
    }
    old = schema(Patch=patch)
    new = schema(Patch={**patch, "required": ["title"]})

    assert schema_report(old, new, "v1").section(THREE_STATE).removed == ("Patch.title",)


# --- formatting and directories ---------------------------------------------


def test_identical_schemas_format_as_one_line() -> None:
    doc = schema(A={"type": "string"}, B=message("agent", "initialize"))

    report = schema_report(doc, doc, "v2", "v2/schema.json")

    assert report.is_empty
    assert format_report(report) == "v2/schema.json: no changes"


def test_format_lists_counts_and_compact_empty_sections() -> None:
    report = Report(
        "v1/schema.json",
        (
            Section(DEFS, added=("New",), changed=("Doc", "Real"), docs_only=("Doc",)),
            Section(METHODS),
            Section(VARIANTS, removed=("SessionUpdate.plan",)),
            Section(THREE_STATE),
        ),
    )

    assert format_report(report).splitlines() == [
        "v1/schema.json:",
        "  $defs: +1 -0 ~2 (1 docs only)",
        "    added: New",
        "    changed: Real",
        "    docs only: Doc",
        "  methods: no changes",
        "  union variants: +0 -1",
        "    removed: SessionUpdate.plan",
        "  three-state fields: no changes",
    ]


def test_long_lists_wrap_without_splitting_names() -> None:
    names = tuple(f"Definition{i:03d}" for i in range(40))
    lines = format_report(Report("x", (Section(DEFS, added=names),))).splitlines()

    assert all(len(line) <= vendor.WRAP_WIDTH for line in lines)
    listed = " ".join(line.split(": ", 1)[-1] for line in lines[2:])
    assert listed.replace(",", "").split() == list(names)


def write_schemas(root: Path, docs: dict[str, dict[str, Any]]) -> Path:
    for name, doc in docs.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
    return root


def test_dir_reports_compares_every_schema_file(tmp_path: Path) -> None:
    base = schema(A={"type": "string"})
    old = write_schemas(tmp_path / "old", {name: base for name in SCHEMA_FILES[:-1]})
    changed = {**base["$defs"], "B": {"type": "string"}}
    new_docs = {name: base for name in SCHEMA_FILES} | {"v2/schema.json": schema(**changed)}
    new = write_schemas(tmp_path / "new", new_docs)

    reports = {report.name: report for report in dir_reports(old, new)}

    assert list(reports) == list(SCHEMA_FILES)
    assert reports["v1/schema.json"].is_empty
    assert reports["v2/schema.json"].section(DEFS).added == ("B",)
    assert reports["v2/schema.unstable.json"].note == "new file"
    assert reports["v2/schema.unstable.json"].section(DEFS).added == ("A",)


def test_report_cli_prints_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = {name: schema(A={"type": "string"}) for name in SCHEMA_FILES}
    old = write_schemas(tmp_path / "old", docs)
    new = write_schemas(tmp_path / "new", docs)
    before = sorted(p.name for p in tmp_path.rglob("*"))

    assert vendor.main(["report", str(old), str(new)]) == 0

    assert capsys.readouterr().out.splitlines() == [f"{n}: no changes" for n in SCHEMA_FILES]
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_report_cli_rejects_missing_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert vendor.main(["report", str(tmp_path / "nope"), str(tmp_path)]) == 1
    assert "is not a directory" in capsys.readouterr().err


# --- tarball handling and update, with npm faked ----------------------------


def make_tarball(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def package_files(docs: dict[str, dict[str, Any]]) -> dict[str, bytes]:
    return {f"package/schema/{name}": json.dumps(doc).encode() for name, doc in docs.items()}


def test_extract_refuses_paths_outside_destination(tmp_path: Path) -> None:
    tarball = make_tarball(tmp_path / "evil.tgz", {"../escape.txt": b"x"})
    (tmp_path / "out").mkdir()

    with pytest.raises(tarfile.OutsideDestinationError):
        vendor.extract_tarball(tarball, tmp_path / "out")
    assert not (tmp_path / "escape.txt").exists()


def test_missing_schema_file_in_package_fails_clearly(tmp_path: Path) -> None:
    docs = {name: schema() for name in SCHEMA_FILES if name != "v2/schema.unstable.json"}
    tarball = make_tarball(tmp_path / "pkg.tgz", package_files(docs))
    extracted = vendor.extract_tarball(tarball, tmp_path)

    with pytest.raises(VendorError, match=r"package/schema/v2/schema\.unstable\.json"):
        vendor.packaged_schema_dir(extracted, "pkg.tgz")


def fake_registry(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    docs: dict[str, dict[str, Any]],
    integrity: str | None = None,
) -> None:
    """npm faked: @scope/pkg@2.0.0 packs to a tarball of `docs`; the registry reports
    `integrity`, by default the tarball's own."""
    published = make_tarball(tmp_path / "published.tgz", package_files(docs))

    def fake_npm_pack(package: str, version: str, dest: Path) -> Path:
        assert (package, version) == ("@scope/pkg", "2.0.0")
        return Path(shutil.copy(published, dest / "scope-pkg-2.0.0.tgz"))

    def fake_registry_integrity(package: str, version: str) -> str:
        assert (package, version) == ("@scope/pkg", "2.0.0")
        return integrity or vendor.tarball_integrity(published)

    monkeypatch.setattr(vendor, "npm_pack", fake_npm_pack)
    monkeypatch.setattr(vendor, "registry_integrity", fake_registry_integrity)


def test_tarball_integrity_is_the_npm_sri_string(tmp_path: Path) -> None:
    tarball = tmp_path / "t.tgz"
    tarball.write_bytes(b"abc")
    # sha512("abc") in base64, as npm writes it in dist.integrity
    assert vendor.tarball_integrity(tarball) == (
        "sha512-3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw=="
    )


def test_fetch_refuses_a_tarball_that_does_not_match_the_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = {name: schema(A={"type": "string"}) for name in SCHEMA_FILES}
    fake_registry(monkeypatch, tmp_path, docs, integrity="sha512-bm90IHRoaXMgdGFyYmFsbA==")
    dest = tmp_path / "fetched"

    with pytest.raises(VendorError, match=r"does not match the registry's sha512-bm90"):
        vendor.fetch("2.0.0", dest, "@scope/pkg", compare_with=tmp_path / "absent")
    assert not (dest / "lock.json").exists()
    assert not any(dest.rglob("*.json"))


def test_fetch_writes_a_locked_release_into_a_new_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    current = write_schemas(tmp_path / "schema", {n: schema() for n in SCHEMA_FILES})
    write_lock(current, NpmRelease("@scope/pkg", "1.0.0"))
    docs = {name: schema(A={"type": "string"}) for name in SCHEMA_FILES}
    fake_registry(monkeypatch, tmp_path, docs)

    done = vendor.fetch("2.0.0", tmp_path / "build" / "schema-2.0.0", "@scope/pkg", current)

    assert [report.section(DEFS).added for report in done.reports] == [("A",)] * len(SCHEMA_FILES)
    lock = verify_lock(tmp_path / "build" / "schema-2.0.0")
    assert lock.source == NpmRelease("@scope/pkg", "2.0.0")
    assert read_lock(current).release == "1.0.0"  # the vendored schema is untouched


def test_update_reports_then_installs_and_locks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old_docs = {name: schema(A={"type": "string"}) for name in SCHEMA_FILES}
    schema_dir = write_schemas(tmp_path / "schema", old_docs)
    write_lock(schema_dir, NpmRelease("@scope/pkg", "1.0.0"))
    new_docs = {name: schema(A={"type": "string"}, B={"type": "null"}) for name in SCHEMA_FILES}

    fake_registry(monkeypatch, tmp_path, new_docs)

    done = vendor.update("2.0.0", schema_dir, "@scope/pkg")

    assert [report.section(DEFS).added for report in done.reports] == [("B",)] * len(SCHEMA_FILES)
    lock = verify_lock(schema_dir)
    assert lock.source == NpmRelease("@scope/pkg", "2.0.0")
    for name, doc in new_docs.items():
        assert json.loads((schema_dir / name).read_text()) == doc


def test_update_takes_the_package_option_before_or_after_the_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`nox -s update_schema -- --package X 2.0.0` passes every argument to this CLI (it used to
    pass the first only, dropping --package)."""
    docs = {name: schema(A={"type": "string"}) for name in SCHEMA_FILES}
    fake_registry(monkeypatch, tmp_path, docs)  # asserts the package is @scope/pkg
    for n, argv in enumerate(
        (["--package", "@scope/pkg", "2.0.0"], ["2.0.0", "--package", "@scope/pkg"])
    ):
        schema_dir = tmp_path / f"schema-{n}"
        assert vendor.main(["update", *argv, "--schema-dir", str(schema_dir)]) == 0
        assert read_lock(schema_dir).source == NpmRelease("@scope/pkg", "2.0.0")
        assert f"vendored @scope/pkg@2.0.0 into {schema_dir}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "give an npm version (e.g. 2.4.0), or --from PATH --release X.Y.Z+LABEL"),
        (["2.4.0", "--from", "x", "--release", "2.4.0+a"], "give an npm version (2.4.0) or --from"),
        (["--from", "x"], "--from needs --release X.Y.Z+LABEL"),
        (["--from", "x", "--release", "2.4.0+a", "--package", "p"], "--package names an npm"),
        (["2.4.0", "--release", "2.4.0+a"], "--rev and --release go with --from"),
    ],
)
def test_update_arguments_that_do_not_fit_are_refused(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        vendor.main(["update", *argv])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_a_new_release_with_the_same_files_says_only_the_label_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was: every file reported 'no changes', which read as if nothing had happened."""
    docs = {name: schema(A={"type": "string"}) for name in SCHEMA_FILES}
    schema_dir = write_schemas(tmp_path / "schema", docs)
    write_lock(schema_dir, NpmRelease("@scope/pkg", "1.9.0"))
    fake_registry(monkeypatch, tmp_path, docs)

    done = vendor.update("2.0.0", schema_dir, "@scope/pkg")

    assert done.format().splitlines() == [
        f"release: @scope/pkg@1.9.0 (acp-schema 1.9.0.{REV}) -> "
        f"@scope/pkg@2.0.0 (acp-schema 2.0.0.{REV})",
        "schema files: identical, byte for byte, to the ones they replace; only the release "
        "label (and so the acp-schema version) changes",
    ]
    assert vendor.update("2.0.0", schema_dir, "@scope/pkg").format().splitlines() == [
        f"release: unchanged, @scope/pkg@2.0.0 (acp-schema 2.0.0.{REV})",
        "schema files: unchanged",
    ]


def test_a_first_vendoring_lists_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = {name: schema(A={"type": "string"}) for name in SCHEMA_FILES}
    fake_registry(monkeypatch, tmp_path, docs)

    lines = vendor.update("2.0.0", tmp_path / "schema", "@scope/pkg").format().splitlines()

    assert lines[0] == f"release: @scope/pkg@2.0.0 (acp-schema 2.0.0.{REV}), no previous lock"
    assert lines[1] == "v1/schema.json (new file):"


# --- the lock ---------------------------------------------------------------


@pytest.fixture
def locked_dir(tmp_path: Path) -> Path:
    docs = {name: schema(A={"type": "string"}) for name in SCHEMA_FILES}
    schema_dir = write_schemas(tmp_path / "schema", docs)
    write_lock(schema_dir, NpmRelease("@agentclientprotocol/sdk", "9.9.9"))
    return schema_dir


def test_lock_verifies_untouched_files(locked_dir: Path) -> None:
    lock = verify_lock(locked_dir)

    assert lock == read_lock(locked_dir)
    assert sorted(lock.files) == sorted(SCHEMA_FILES)


def test_lock_rejects_a_tampered_file(locked_dir: Path) -> None:
    target = locked_dir / "v2/schema.json"
    target.write_bytes(target.read_bytes() + b"\n")

    with pytest.raises(LockMismatch, match=r"v2/schema\.json: sha256"):
        verify_lock(locked_dir)


def test_lock_rejects_a_missing_file(locked_dir: Path) -> None:
    (locked_dir / "v1/schema.unstable.json").unlink()

    with pytest.raises(LockMismatch, match="missing"):
        verify_lock(locked_dir)
