"""Bindings from an unreleased spec (README: "Bindings from an unreleased spec").

A snapshot is derived here from schema/ the way the protocol repository's main branch differs
from an npm release: a type moved from stable to unstable only, a renamed type, a new union
variant and a new field with patch semantics (worded like the existing ones). It is committed to
a git repository laid out like the protocol's (schema/v1, schema/v2), and generated from the
way the README says: straight from the repository at a revision, from a directory, and vendored
into a schema dir with `codegen.vendor update --from` (what `nox -s update_schema` runs).
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from codegen import vendor
from codegen.__main__ import main as codegen_main
from codegen.lock import LockMismatch, NpmRelease, Snapshot, read_lock, verify_lock, write_lock
from codegen.release import BINDINGS_REVISION
from helpers.paths import types_source
from helpers.schema_edits import (
    ROOT,
    Schema,
    add_progress_variant,
    drop_def,
    generate_and_probe,
    rename_def,
    write_edited,
)

LABEL = "2.4.0+main.test"
VERSION = f"2.4.0.{BINDINGS_REVISION}+main.test"
BUDGET = {
    "description": "Remaining budget for the session.\n\nOmitted leaves the last reported "
    "budget unchanged. `null` clears it. A value replaces it.",
    "anyOf": [{"$ref": "#/$defs/SessionCost"}, {"type": "null"}],
}


def unreleased(name: str, schema: Schema) -> None:
    """What the protocol's main branch could hold on top of the vendored release."""
    if name == "v2/schema.json":
        drop_def(schema, "CompactionUpdate")  # moved to the unstable surface only
    if name.startswith("v2/"):
        schema.update(rename_def(schema, "Cost", "SessionCost"))
        schema["$defs"]["UsageUpdate"]["properties"]["budget"] = BUDGET
    add_progress_variant(name, schema)


def git(repo: Path, *args: str) -> str:
    identity = ("-c", "user.name=test", "-c", "user.email=test@example.invalid")
    done = subprocess.run(
        ["git", "-C", str(repo), *identity, *args], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git repository laid out like the protocol's, the snapshot committed on `main`."""
    repo = tmp_path_factory.mktemp("upstream") / "agent-client-protocol"
    write_edited(repo / "schema", unreleased)
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", "schema")
    git(repo, "commit", "--quiet", "-m", "unreleased schema")
    return repo, git(repo, "rev-parse", "HEAD")


PROBE = """
import json, sys
import acp_schema
from acp_schema import UNSET, v2
from acp_schema.v2 import unstable

progress = v2.decode_message(sys.argv[1].encode())
cleared = v2.decode_message(sys.argv[2].encode())
untouched = v2.decode_message(sys.argv[3].encode())
print(json.dumps({
    "version": acp_schema.__version__,
    "source": acp_schema.SCHEMA_RELEASES["v2"][0],
    "variant": type(progress.params.update).__name__,
    "percent": progress.params.update.percent,
    "budget_null_is_none": cleared.params.update.budget is None,
    "budget_omitted_is_unset": untouched.params.update.budget is UNSET,
    "null_kept": json.loads(v2.encode_message(cleared)) == json.loads(sys.argv[2]),
    "renamed": [hasattr(v2, "SessionCost"), hasattr(v2, "Cost")],
    "compaction": [hasattr(v2, "CompactionUpdate"), hasattr(unstable, "CompactionUpdate")],
}))
"""
PROGRESS_LINE = (
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s",'
    '"update":{"sessionUpdate":"turn_progress","percent":40}}}'
)


def usage_line(extra: str) -> str:
    return (
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s",'
        f'"update":{{"sessionUpdate":"usage_update","used":1,"size":8{extra}}}}}}}'
    )


def field_doc(types_py: str, class_name: str, field: str) -> str:
    body = types_py.split(f"\nclass {class_name}(", 1)[1].split("\nclass ", 1)[0]
    return body.split(f"    {field}:", 1)[1].split('"""', 2)[1]


def test_generate_straight_from_a_git_revision(upstream: tuple[Path, str], tmp_path: Path) -> None:
    repo, commit = upstream
    result = generate_and_probe(
        repo,
        tmp_path,
        PROBE,
        PROGRESS_LINE,
        usage_line(',"budget":null'),
        usage_line(""),
        codegen_args=("--rev", "main", "--release", LABEL),
    )

    assert result == {
        "version": VERSION,
        "source": f"snapshot {LABEL} (git {commit}) schema/v2/schema.json",
        "variant": "TurnProgressSessionUpdate",
        "percent": 40,
        "budget_null_is_none": True,
        "budget_omitted_is_unset": True,
        "null_kept": True,
        "renamed": [True, False],
        "compaction": [False, True],
    }
    types_py = types_source(tmp_path / "acp_schema" / "v2")
    assert "Three-state patch field" in field_doc(types_py, "UsageUpdate", "budget")
    assert not (repo / "schema" / "lock.json").exists()  # the snapshot is only read


def test_generate_from_a_directory(
    upstream: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkout (its schema/ holds v1/ and v2/), as it is on disk: no git involved."""
    repo, _ = upstream
    out = tmp_path / "acp_schema"

    assert codegen_main(["--schema-dir", str(repo), "--release", LABEL, "--out", str(out)]) == 0

    header = (out / "v2" / "types.py").read_text().splitlines()[0]
    assert header.endswith(f"snapshot {LABEL} schema/v2/schema.json"), header
    assert f"snapshot {LABEL} -> acp-schema {VERSION}" in capsys.readouterr().out


def test_vendor_the_snapshot_report_then_generate(
    upstream: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`nox -s update_schema -- --from REPO --rev main --release LABEL`, into a copy of schema/."""
    repo, commit = upstream
    schema_dir = tmp_path / "schema"
    shutil.copytree(ROOT / "schema", schema_dir)
    args = ["--from", str(repo), "--rev", "main", "--release", LABEL]

    assert vendor.main(["update", *args, "--schema-dir", str(schema_dir)]) == 0

    report = capsys.readouterr().out
    assert (
        f"release: @agentclientprotocol/sdk@2.4.0 (acp-schema 2.4.0.{BINDINGS_REVISION}) -> "
        f"snapshot {LABEL} (git {commit}) (acp-schema {VERSION})"
    ) in report
    v2_stable = report.split("v2/schema.json:", 1)[1].split("v2/schema.unstable.json", 1)[0]
    for expected in (
        "  renamed $defs: ~1\n    changed: Cost -> SessionCost",
        "  union variants: +1 -1\n    added: SessionUpdate.turn_progress\n"
        "    removed: SessionUpdate.compaction_update",
        "  three-state fields: +1 -3\n    added: UsageUpdate.budget\n"
        "    removed: CompactionUpdate._meta, CompactionUpdate.error, CompactionUpdate.summary",
        "  moved between stable and unstable: +0 -1\n"
        "    removed: CompactionUpdate (now unstable only)",
    ):
        assert expected in v2_stable, f"{expected!r} not in:\n{v2_stable}"
    lock = verify_lock(schema_dir)
    assert lock.source == Snapshot(LABEL, str(repo.resolve()), "main", commit)

    out = tmp_path / "acp_schema"
    assert codegen_main(["--schema-dir", str(schema_dir), "--out", str(out)]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert (
        "codegen: warning: patch fields: v2/schema.json UsageUpdate.budget: the schema "
        "describes it as a patch field (generated three-state); codegen/patch_fields.py does "
        "not list it"
    ) in warnings
    assert (
        "codegen: warning: patch fields: v2/schema.json CompactionUpdate: the schema has no "
        "such type; codegen/patch_fields.py lists it as a patch type"
    ) in warnings
    assert any("'turn_progress' is not in codegen/names.py" in line for line in warnings)


# --- the errors on the way, each naming its fix ---------------------------------


def run_codegen(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The generator's stderr; it must fail cleanly (exit 1, no traceback)."""
    assert codegen_main([*args, "--out", "/nonexistent/acp_schema"]) == 1
    return capsys.readouterr().err


def test_an_unlocked_dir_without_a_release_label_names_both_ways(
    upstream: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Was a FileNotFoundError traceback (no lock.json)."""
    repo, _ = upstream
    err = run_codegen(capsys, "--schema-dir", str(repo / "schema"))
    assert "(no lock.json) are not a locked release" in err
    assert "--release X.Y.Z+LABEL" in err and "Bindings from an unreleased spec" in err
    assert "nox -s update_schema -- <npm version>" in err


def test_a_git_revision_without_a_release_label(
    upstream: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    repo, _ = upstream
    err = run_codegen(capsys, "--schema-dir", str(repo), "--rev", "main")
    assert f"{repo} at main are not a locked release" in err and "--release" in err


@pytest.mark.parametrize(
    ("label", "message"),
    [
        ("2.4.0", "add a label, e.g. 2.4.0+main.<commit>"),
        (
            "2.5.0-main.b7f0005",
            "is not MAJOR.MINOR.PATCH (an npm release) or MAJOR.MINOR.PATCH+LABEL",
        ),
    ],
)
def test_a_snapshot_label_must_say_what_it_builds_on_and_what_it_is(
    upstream: tuple[Path, str], capsys: pytest.CaptureFixture[str], label: str, message: str
) -> None:
    repo, _ = upstream
    err = run_codegen(capsys, "--schema-dir", str(repo), "--rev", "main", "--release", label)
    assert message in err, err


def test_a_revision_that_is_not_there_or_lacks_the_files(
    upstream: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, _ = upstream
    err = run_codegen(capsys, "--schema-dir", str(repo), "--rev", "no-such-ref", "--release", LABEL)
    assert "rev-parse" in err and "no-such-ref" in err

    partial = tmp_path / "partial"
    (partial / "schema" / "v1").mkdir(parents=True)
    (partial / "schema" / "v1" / "schema.json").write_text("{}")
    git(partial, "init", "--quiet")
    git(partial, "add", "schema")
    git(partial, "commit", "--quiet", "-m", "v1 only")
    err = run_codegen(capsys, "--schema-dir", str(partial), "--rev", "HEAD", "--release", LABEL)
    assert "has no schema/v1/schema.unstable.json, schema/v2/schema.json" in err

    err = run_codegen(capsys, "--schema-dir", str(tmp_path), "--rev", "HEAD", "--release", LABEL)
    assert "not a git repository" in err


def test_a_file_that_is_not_json_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snapshot = write_edited(tmp_path / "snapshot", lambda name, schema: None)
    (snapshot / "v2" / "schema.json").write_text('{"$defs": ')
    err = run_codegen(capsys, "--schema-dir", str(snapshot), "--release", LABEL)
    assert f"snapshot {LABEL} schema/v2/schema.json is not a JSON file: Expecting value" in err


def test_a_release_label_on_a_locked_dir_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = run_codegen(capsys, "--schema-dir", str(ROOT / "schema"), "--release", LABEL)
    assert "is locked as @agentclientprotocol/sdk@2.4.0" in err and "drop --release" in err


def test_a_hand_edited_locked_file_names_restore_and_snapshot(tmp_path: Path) -> None:
    """Was: 'run `nox -s update_schema -- <version>`', which takes npm versions only."""
    schema_dir = tmp_path / "schema"
    shutil.copytree(ROOT / "schema", schema_dir)
    path = schema_dir / "v2" / "schema.json"
    path.write_text(json.dumps(json.loads(path.read_text())))
    with pytest.raises(LockMismatch, match="sha256") as caught:
        verify_lock(schema_dir)
    message = str(caught.value)
    assert f"git checkout -- {path}" in message
    assert "nox -s update_schema -- --from <dir or git checkout> [--rev REF] --release" in message


def test_relocking_the_same_files_under_another_label_says_only_the_label_changed(
    upstream: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, _ = upstream
    schema_dir = tmp_path / "schema"
    write_edited(schema_dir, unreleased)
    write_lock(schema_dir, NpmRelease("@agentclientprotocol/sdk", "2.4.0"))
    args = ["--from", str(repo), "--rev", "main", "--release", LABEL]

    assert vendor.main(["update", *args, "--schema-dir", str(schema_dir)]) == 0

    lines = capsys.readouterr().out.splitlines()
    assert lines[2:] == [
        "schema files: identical, byte for byte, to the ones they replace; only the release "
        "label (and so the acp-schema version) changes"
    ]
    assert read_lock(schema_dir).release == LABEL


# --- the README's steps, on the derived snapshot -------------------------------

README_SECTION = "### Bindings from an unreleased spec"


def readme_commands() -> list[list[str]]:
    """The `python3 -m nox -s <session> -- ...` lines of the README section, split."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split(README_SECTION, 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    return [
        shlex.split(line.strip())
        for line in section.splitlines()
        if line.strip().startswith("python3 -m nox -s ")
    ]


def test_the_readme_steps_run_as_written(
    upstream: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each nox line's arguments, given to what the session runs (`generate`: python -m codegen;
    `update_schema`: codegen.vendor update; `dist`: codegen.vendor update into a build dir),
    with $ACP the derived snapshot's repository; `--out` and schema/ go to tmp_path."""
    repo, _ = upstream
    sessions = []
    for argv in readme_commands():
        session, args = argv[4], [repo.as_posix() if a == "$ACP" else a for a in argv[6:]]
        sessions.append(session)
        if session == "generate":
            out = args.index("--out") + 1
            args[out] = str(tmp_path / "out" / "acp_schema")
            assert codegen_main(args) == 0
            assert (tmp_path / "out" / "acp_schema" / "v2" / "types.py").is_file()
        elif session == "update_schema":
            schema_dir = tmp_path / "schema"
            shutil.copytree(ROOT / "schema", schema_dir, dirs_exist_ok=True)
            assert vendor.main(["update", *args, "--schema-dir", str(schema_dir)]) == 0
            assert (
                codegen_main(["--schema-dir", str(schema_dir), "--out", str(tmp_path / "a")]) == 0
            )
        elif session == "dist":
            build = [
                "--schema-dir",
                str(tmp_path / "other"),
                "--compare-with",
                str(ROOT / "schema"),
            ]
            assert vendor.main(["update", *build, *args]) == 0
        capsys.readouterr()
    assert sessions[0] == "generate" and "update_schema" in sessions and "dist" in sessions
