"""Everything acpwire does, as nox sessions: generate, check_generated, tests, lint, docs (the
API reference), demo, bench, dist (the two wheels) and smoke (the wheels in a clean
environment)."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import nox

ROOT = Path(__file__).parent
INTEROP_TS = ROOT / "tests" / "interop" / "ts"
BUILD = ROOT / "build"
DIST = ROOT / "dist"

HELLO_AGENT = ("python", "-m", "acpwire.examples.hello_agent")
ECHO_AGENT = ("python", "-m", "acpwire.fixtures.echo_agent")
FIXTURE_CLIENT = ("python", "-m", "acpwire.fixtures.client")

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["check_generated", "lint", "tests"]

# The exact tool versions of development and CI runs (never in published metadata).
PINS = {
    "agent-client-protocol": "0.12.1",
    "anyio": "4.16.0",
    "datamodel-code-generator": "0.89.0",
    "h2": "4.4.1",
    "hatchling": "1.27.0",
    "httpx": "0.28.1",
    "httpx-ws": "0.9.0",
    "hypercorn": "0.18.0",
    "hypothesis": "6.170.17",
    "jinja2": "3.1.6",
    "jsonschema": "4.26.0",
    "msgspec": "0.22.0",
    "mypy": "2.4.1",
    "opentelemetry-api": "1.45.2",
    "opentelemetry-sdk": "1.45.2",
    "orjson": "3.13.0",
    "packaging": "26.4",
    "pdoc": "16.0.0",
    "pytest": "9.0.3",
    "redis": "8.1.0",
    "rich": "15.0.0",
    "ruff": "0.17.6",
    "trio": "0.35.0",
    "trustme": "1.2.1",
    "uvicorn": "0.54.0",
    "uvloop": "0.23.0",
    "websockets": "15.0.1",
    "wsproto": "1.3.2",
}
CODEGEN = ("jinja2", "ruff", "msgspec")
# the `remote` extra, and its server
REMOTE = ("httpx", "h2", "httpx-ws", "wsproto", "websockets", "hypercorn")
CLI = ("rich",)  # the `cli` extra: `acpwire show`'s terminal view
OTEL = ("opentelemetry-api",)  # the `otel` extra: acpwire.otel (spans, trace context in _meta)
TOOLS = {
    "codegen": CODEGEN,
    "test": (
        *CODEGEN,
        *("pytest", "hypothesis", "jsonschema", "datamodel-code-generator", "trio", "anyio"),
        "packaging",
        "mypy",  # tests type-check user code against the public API (mypy --strict)
        "pdoc",  # tests/e2e/test_docs.py checks docstrings with the docs build's own rules
        *REMOTE,
        *CLI,
        *OTEL,
        "opentelemetry-sdk",  # its InMemorySpanExporter checks the spans acpwire.otel makes
        "trustme",  # TLS certificates for the HTTPS / HTTP/2 tests
        "redis",  # RedisSessionStore, against the redis-server the tests start
        "uvicorn",  # agent_app under another ASGI server (HTTP/1.1, WebSocket)
    ),
    "bench": (
        *("msgspec", "trio", "anyio", "uvloop", "orjson", "agent-client-protocol", *REMOTE),
        *(*OTEL, "opentelemetry-sdk"),  # bench/runtime_path.py: the cost of telemetry set
        "uvicorn",  # bench/remote.py: agent_app and the floor under uvicorn too
    ),
    "lint": (
        *CODEGEN,
        "mypy",
        "trio",
        "anyio",
        "pytest",
        "hypothesis",
        "jsonschema",
        *REMOTE,
        *CLI,
        *OTEL,
        "opentelemetry-sdk",  # the tests' exporter (tests are linted too)
    ),
    "dist": (*CODEGEN, "hatchling"),
    "docs": ("msgspec", "trio", "anyio", "pdoc", *REMOTE, *OTEL),
}


def _install(session: nox.Session, tools: str) -> None:
    """The development project (editable) and the pinned tools of one TOOLS entry."""
    pinned = [f"{name}=={PINS[name]}" for name in TOOLS[tools]]
    session.install("--quiet", "-e", ".", *pinned)


@nox.session
def generate(session: nox.Session) -> None:
    """Regenerate generated/acp_schema from schema/ (refuses files that don't match schema/lock.json).

    Arguments go to `python -m codegen`: `nox -s generate -- --schema-dir DIR --release
    X.Y.Z+LABEL --out OUT` generates from schema files that were never released (a directory,
    or with `--rev REF` a git repository's schema/ at that revision) into OUT."""
    _install(session, "codegen")
    session.run("python", "-m", "codegen", *session.posargs)


@nox.session
def check_generated(session: nox.Session) -> None:
    """Fail when a generated file under generated/acp_schema is not exactly what the generator
    produces from schema/ (stale, missing or extra; the hand-written _runtime/ is not generated)."""
    _install(session, "codegen")
    session.run("python", "-m", "codegen", "--check")


def _interop_deps(session: nox.Session) -> None:
    """The official SDKs our interop tests run as real peers."""
    session.install(  # with its `http` extra (httpx, websockets): the remote peers
        "--quiet",
        f"agent-client-protocol[http]=={PINS['agent-client-protocol']}",
        f"websockets=={PINS['websockets']}",
    )
    installed = INTEROP_TS / "node_modules" / ".package-lock.json"  # npm writes it last
    lock = INTEROP_TS / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        session.run("npm", "ci", "--silent", "--prefix", str(INTEROP_TS), external=True)


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite: conformance, generated round trips, codegen checks, runtime, interop."""
    _install(session, "test")
    _interop_deps(session)
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint + format check) and mypy --strict over generated/, codegen/ and runtime/."""
    _install(session, "lint")
    paths = ["codegen", "runtime", "tests", "generated", "noxfile.py", "bench", "fuzz", "docs"]
    paths += ["distributions", ".ci/smoke_schema.py"]
    session.run("ruff", "check", *paths)
    session.run("ruff", "format", "--check", *paths)
    session.run("mypy", "--strict", "generated/acp_schema", "codegen", "runtime/acpwire")


@nox.session
def docs(session: nox.Session) -> None:
    """The API reference (pdoc) of acpwire and acp_schema from the docstrings into docs/_build
    (`nox -s docs -- <dir>` for another directory), with search. A pdoc warning, a public
    object without a docstring, or a type in a rendered signature that links nowhere fails
    the build (docs/build.py)."""
    _install(session, "docs")
    session.run("python", "docs/build.py", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """The main job: regenerate the bindings from schema/ and show them working: the schema
    tour, the README's example client and agent over stdio (v2), then the interop fixtures
    (echo agent and client: permission, cancellation, session/close) over v2 and v1."""
    _install(session, "codegen")
    session.run("python", "-m", "codegen")
    session.run("python", "-m", "acpwire.examples.schema_tour")
    session.log("the README's example client <-> example agent over stdio, protocol v2")
    session.run("python", "-m", "acpwire.examples.hello_client", "--", *HELLO_AGENT)
    for protocol in ("2", "1"):
        session.log(f"acpwire client <-> acpwire echo agent over stdio, protocol v{protocol}")
        session.run(*FIXTURE_CLIENT, "--protocol", protocol, "--", *ECHO_AGENT)


@nox.session
def update_schema(session: nox.Session) -> None:
    """Vendor other schema files into schema/ (and lock them), print the change report, regenerate.

    `nox -s update_schema -- <npm version> [--package NAME]`: a release of
    @agentclientprotocol/sdk, fetched with npm pack and checked against the registry's integrity
    hash. `nox -s update_schema -- --from PATH [--rev REF] --release X.Y.Z+LABEL`: schema files
    never published as an npm release (the protocol repository's main branch, a fork, a draft
    PR): a directory holding v1/ and v2/ (or a checkout whose schema/ does), or with `--rev` the
    schema/ of that revision of a git repository; the label (the npm release the files build
    on, then a label) becomes the acp-schema version X.Y.Z.<revision>+LABEL. Every argument goes
    to `python -m codegen.vendor update`."""
    if not session.posargs:
        session.error(
            "usage: nox -s update_schema -- <npm version> [--package NAME]\n"
            "   or: nox -s update_schema -- --from PATH [--rev REF] --release X.Y.Z+LABEL"
        )
    _install(session, "codegen")
    session.run("python", "-m", "codegen.vendor", "update", *session.posargs)
    session.run("python", "-m", "codegen")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks, side by side with the alternatives in one run (never part of the tests).

    `nox -s bench -- --quick` passes its options to every script; `nox -s bench -- SCRIPT.py
    ...` runs that script of bench/ alone with the options after it (`nox -s bench --
    remote.py --server hypercorn hypercorn-buffered --only ...`)."""
    _install(session, "bench")
    _interop_deps(session)
    scripts = ("agents.py", "stdio.py", "streaming.py", "codec.py", "runtime_path.py")
    scripts = (*scripts, "session_state.py", "trace_tap.py", "remote.py")
    options = session.posargs
    if options and options[0].endswith(".py"):
        scripts, options = (Path(options[0]).name,), options[1:]  # remote.py or bench/remote.py
    for script in scripts:
        session.run("python", f"bench/{script}", *options)


@nox.session
def fuzz(session: nox.Session) -> None:
    """Fuzz for longer than CI: tests/wire/test_fuzz.py with FUZZ_EXAMPLES examples (default 20000,
    ~20 min), then atheris (libFuzzer) on the decode entry points for a bounded time.

    `nox -s fuzz -- -max_total_time=600` passes libFuzzer flags (default -max_total_time=120);
    `FUZZ_EXAMPLES=0` skips the hypothesis part. The corpus and any crash-* input land under
    fuzz/corpus/ (git-ignored); replay one with `python fuzz/atheris_decode.py <file>`."""
    import os

    _install(session, "test")
    session.install(  # 3.1.0 has wheels for Python 3.12+ only (and no sdist)
        "--quiet",
        "atheris==3.1.0; python_version >= '3.12'",
        "atheris==3.0.0; python_version < '3.12'",
    )
    examples = os.environ.get("FUZZ_EXAMPLES", "20000")
    if examples != "0":
        session.run(
            "python",
            "-m",
            "pytest",
            "-q",
            "tests/wire/test_fuzz.py",
            env={"FUZZ_EXAMPLES": examples},
        )
    corpus = ROOT / "fuzz" / "corpus"
    session.run("python", "fuzz/seeds.py", "--out", str(corpus / "seeds"))
    flags = list(session.posargs)
    if not any(f.startswith(("-max_total_time=", "-runs=")) for f in flags):
        flags.append("-max_total_time=120")
    session.run(
        "python",
        "fuzz/atheris_decode.py",
        str(corpus / "work"),
        str(corpus / "seeds"),
        f"-dict={corpus / 'acp.dict'}",
        f"-artifact_prefix={corpus / 'crashes'}/",
        "-timeout=10",
        "-print_final_stats=1",
        *flags,
    )


def _build_wheel(session: nox.Session, project: Path, wheel_dir: Path) -> None:
    session.run(
        *("python", "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"),
        *("--wheel-dir", str(wheel_dir), str(project)),
    )


def _locked_release(schema_dir: Path) -> str:
    """The npm version or snapshot label schema_dir/lock.json records."""
    source = json.loads((schema_dir / "lock.json").read_text())["source"]
    return str(source.get("version") or source["snapshot"])


@nox.session
def dist(session: nox.Session) -> None:
    """`nox -s dist`: the acp-schema and acpwire wheels for schema/ into dist/.

    `nox -s dist -- <npm version> [--package NAME]`: the acp-schema wheel for that release of
    @agentclientprotocol/sdk (fetched with npm pack, checked against the registry's integrity
    hash, generated under build/); `nox -s dist -- --from PATH [--rev REF] --release
    X.Y.Z+LABEL`: the acp-schema wheel for schema files never published as a release (see
    `update_schema`), versioned X.Y.Z.<revision>+LABEL. Either goes into dist/schema-<release>/;
    schema/ is not touched. Every run ends saying which acpwire the acp-schema wheel installs
    next to (acpwire requires `acp-schema>=X,<Y`), and what to do when it does not."""
    _install(session, "dist")
    if not session.posargs:
        schema_dir, wheel_dir = ROOT / "schema", DIST
        for old in DIST.glob("*.whl"):
            old.unlink()
    else:
        schema_dir = BUILD / "schema-other"
        vendor = ("python", "-m", "codegen.vendor", "update", "--schema-dir", str(schema_dir))
        session.run(*vendor, "--compare-with", str(ROOT / "schema"), *session.posargs)
        wheel_dir = DIST / f"schema-{_locked_release(schema_dir)}"
    stage = ["python", "-m", "codegen.release"]
    session.run(*stage, "stage-schema", str(schema_dir), str(BUILD / "acp-schema"))
    _build_wheel(session, BUILD / "acp-schema", wheel_dir)
    if not session.posargs:
        session.run(*stage, "stage-runtime", str(BUILD / "acpwire"))
        _build_wheel(session, BUILD / "acpwire", wheel_dir)
    for wheel in sorted(wheel_dir.glob("*.whl")):
        session.log(f"{wheel.relative_to(ROOT)}: {wheel.stat().st_size} bytes")
    session.run(*stage, "compatibility", str(schema_dir))


def _only_wheel(pattern: str) -> Path:
    wheels = sorted(DIST.glob(pattern))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one {pattern} in {DIST}, found {wheels}; run `nox -s dist`")
    return wheels[0]


def _wheel_version(wheel: Path) -> str:
    match = re.fullmatch(r"[^-]+-([^-]+)-.*\.whl", wheel.name)
    assert match, wheel.name
    return match.group(1)


@nox.session(reuse_venv=False, requires=["dist"])
def smoke(session: nox.Session) -> None:
    """The wheels from `nox -s dist` in this fresh venv, run with `python -I` from a temporary
    directory (no source tree on sys.path): acp-schema alone (trio absent) decodes and encodes
    v1 and v2 lines; then acpwire (with its `cli` extra)'s example client talks to its example
    agent over stdio (v2), the fixture client to the echo agent over v1, and the `acpwire`
    console script runs a turn through its tap and shows the trace."""
    schema_wheel, runtime_wheel = _only_wheel("acp_schema-*.whl"), _only_wheel("acpwire-*.whl")
    smoke_schema = ROOT / ".ci" / "smoke_schema.py"
    with tempfile.TemporaryDirectory(prefix="acp-smoke-") as tmp:
        session.chdir(tmp)
        session.install("--quiet", str(schema_wheel))
        session.run("python", "-I", str(smoke_schema), _wheel_version(schema_wheel))
        session.install("--quiet", f"{runtime_wheel}[cli]")
        session.run("python", "-I", "-m", "pip", "show", "acpwire", "acp-schema")
        isolated = ("python", "-I", "-m")
        hello_client = (*isolated, "acpwire.examples.hello_client", "--")
        session.run(*hello_client, *isolated, "acpwire.examples.hello_agent")
        echo_agent = (*isolated, "acpwire.fixtures.echo_agent")
        session.run(*isolated, "acpwire.fixtures.client", "--protocol", "1", "--", *echo_agent)
        # the console script: a turn through the tap, then the trace shown
        tapped = ("acpwire", "trace", "--out", "smoke.trace", "--", *echo_agent)
        session.run("acpwire", "run", "--approve", "all", "Hello", "--", *tapped)
        session.run("acpwire", "show", "smoke.trace", "--no-timeline")
        session.run(*isolated, "acpwire", "--version")
