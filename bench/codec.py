"""Codec benchmark: acpwire vs a hand-written msgspec reference, the official Python SDK and
untyped JSON floors, over the same realistic agent -> client corpus, in one run.

Every case runs over the whole corpus (or the same subset for every case of a section);
repetitions are interleaved (round 1: every case, round 2: every case, ...) so all cases see
the same machine state; each figure is the median per message over the rounds, with the
spread (max - min) / median. Before timing, every implementation's output is checked.

    python bench/codec.py            # full run (~1.5 min on 2 cores); writes bench/results/codec.txt
    python bench/codec.py --quick    # smoke run (small corpus, 3 rounds, seconds)
    python bench/codec.py --profile  # cProfile of acpwire decode/encode over the v2 corpus

Sections:
- v2 / v1 whole corpus: acpwire `CLIENT_CODEC.decode(line, result_method)` (responses are
  typed through the client's request table) and `encode_message`, the reference
  (bench/reference.py), msgspec/orjson/json untyped floors.
- v1 SDK subset: the lines agent-client-protocol 0.12.1 can read (its schema predates the
  `notice`/`compaction_*` updates, which it rejects); its real receive and send paths
  (`Sdk.receive` / `Sdk.send` below, each call cited) and pydantic's one-pass
  `validate_json` / `dump_json` (model_validate_json over a method-tagged union) on its models.
- the ~1 MB tool_call_update line: acpwire vs reference vs orjson.
- per message type: acpwire / reference (and v1 SDK) ratios (full run only).
- memory held by 100k decoded session updates (each in a fresh subprocess).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import math
import os
import platform
import pstats
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _p in (ROOT / "generated", ROOT / "runtime", HERE):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import corpus as corpus_mod  # noqa: E402
import forward  # noqa: E402
import msgspec  # noqa: E402
import orjson  # noqa: E402
import reference  # noqa: E402
from report import Sampled, cpu_name, publish  # noqa: E402

from acp_schema import v1, v2  # noqa: E402

MODULES = {"v1": v1, "v2": v2}
SDK_VERSION = "0.12.1"


# --------------------------------------------------------------------------- the official SDK


class Sdk:
    """agent-client-protocol's paths, replicated call for call (no asyncio task per message:
    that is runtime cost, and leaving it out only flatters the SDK).

    Receive (the client reading agent -> client lines):
      acp/_transport.py  NdjsonTransport.receive: `line = line.strip()`, `json.loads(line)`
      acp/connection.py  Connection._process_message: `method = message.get("method")`,
                         `has_id = "id" in message`; a call goes to the router with
                         `message.get("params")`, a response to `_handle_response`
      acp/router.py      MessageRouter._make_func.wrapper: `model.model_validate(params)`, the
                         model per method as registered in acp/client/router.py
                         build_client_router (the kwargs it then builds for the handler are
                         dispatch, not decoding: left out)
      responses:         Connection._handle_response: `future.set_result(message.get("result"))`,
                         then acp/utils.py request_model -> validate_model:
                         `PromptResponse.model_validate(response)` (client/connection.py prompt)
    Send (the agent writing the same lines):
      acp/utils.py       notify_model / request_model -> serialize_params:
                         `params.model_dump(mode="json", by_alias=True, exclude_none=True,
                         exclude_defaults=True)`
      acp/connection.py  send_notification / send_request: the payload dict;
                         a response: Connection._execute_request: `result.model_dump(mode="json",
                         by_alias=True, exclude_none=True, exclude_unset=True)`
      acp/task/sender.py MessageSender.send:
                         `(json.dumps(payload, separators=(",", ":")) + "\\n").encode("utf-8")`
    """

    def __init__(self) -> None:
        from acp import schema
        from pydantic import BaseModel, Field, TypeAdapter, ValidationError, create_model

        self.ValidationError = ValidationError
        self.version = metadata.version("agent-client-protocol")
        # acp/client/router.py build_client_router: method -> params model
        self.models: dict[str, type[BaseModel]] = {
            "fs/write_text_file": schema.WriteTextFileRequest,
            "fs/read_text_file": schema.ReadTextFileRequest,
            "session/request_permission": schema.RequestPermissionRequest,
            "terminal/create": schema.CreateTerminalRequest,
            "terminal/output": schema.TerminalOutputRequest,
            "terminal/release": schema.ReleaseTerminalRequest,
            "terminal/wait_for_exit": schema.WaitForTerminalExitRequest,
            "terminal/kill": schema.KillTerminalRequest,
            "session/update": schema.SessionNotification,
        }
        self.results: dict[str, type[BaseModel]] = {"session/prompt": schema.PromptResponse}

        # pydantic's own best: one validate_json pass over envelope models built on the SDK's
        # models (a union discriminated by `method`; a response is what that union rejects).
        from typing import Annotated, Literal, Union

        envelopes = []
        for method, model in self.models.items():
            fields: dict[str, Any] = {
                "jsonrpc": (Literal["2.0"], ...),
                "method": (Literal[method], ...),  # type: ignore[valid-type]
                "params": (model, ...),
            }
            if method != "session/update":
                fields["id"] = (int | str | None, ...)
            envelopes.append(create_model(f"Env_{model.__name__}", **fields))
        self.envelope = TypeAdapter(
            Annotated[Union[tuple(envelopes)], Field(discriminator="method")]  # noqa: UP007
        )
        self.response_envelope = TypeAdapter(
            create_model(
                "Env_PromptResponse",
                jsonrpc=(Literal["2.0"], ...),
                id=(int | str | None, ...),
                result=(schema.PromptResponse, ...),
            )
        )

    def receive(self, line: bytes, result_method: Callable[[Any], str | None]) -> Any:
        message = json.loads(line.strip())
        method = message.get("method")
        has_id = "id" in message
        if method is not None:
            return self.models[method].model_validate(message.get("params"))
        if has_id:
            return self.results[result_method(message["id"]) or ""].model_validate(
                message.get("result")
            )
        return None

    def validate_json(self, line: bytes) -> Any:
        try:
            return self.envelope.validate_json(line)
        except self.ValidationError:
            return self.response_envelope.validate_json(line)

    @staticmethod
    def send(item: tuple[str, str, Any, Any]) -> bytes:
        kind, method, request_id, model = item
        if kind == "response":
            result = model.model_dump(
                mode="json", by_alias=True, exclude_none=True, exclude_unset=True
            )
            payload: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": result}
        else:
            params = model.model_dump(
                mode="json", by_alias=True, exclude_none=True, exclude_defaults=True
            )
            payload = {"jsonrpc": "2.0", "method": method, "params": params}
            if kind == "request":
                payload = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        return (json.dumps(payload, separators=(",", ":")) + "\n").encode("utf-8")

    def dump_json(self, envelope: Any) -> bytes:
        adapter = self.response_envelope if hasattr(envelope, "result") else self.envelope
        return adapter.dump_json(envelope, by_alias=True, exclude_unset=True)


def load_sdk() -> Sdk | None:
    try:
        sdk = Sdk()
    except ImportError as exc:
        print(f"(official SDK not installed: {exc}; its rows are skipped)", file=sys.stderr)
        return None
    if sdk.version != SDK_VERSION:
        print(f"(note: agent-client-protocol {sdk.version}, pinned is {SDK_VERSION})")
    return sdk


# --------------------------------------------------------------------------- timing


@dataclass
class Case(Sampled):
    section: str
    name: str
    run: Callable[[], object]  # one pass over the section's items
    items: int
    nbytes: int
    passes: int = 1
    samples: list[float] = field(default_factory=list)  # seconds per item


def calibrate(case: Case, target: float) -> None:
    start = time.perf_counter()
    case.run()  # also the warm-up
    once = time.perf_counter() - start
    case.passes = max(1, math.ceil(target / max(once, 1e-9)))


def run_rounds(cases: Sequence[Case], rounds: int, target: float, label: str) -> None:
    for case in cases:
        calibrate(case, target)
    for r in range(rounds):
        print(f"  {label}: round {r + 1}/{rounds}", end="\r", file=sys.stderr, flush=True)
        for case in cases:
            gc.collect()
            run, passes = case.run, case.passes
            start = time.perf_counter()
            for _ in range(passes):
                run()
            case.samples.append((time.perf_counter() - start) / (passes * case.items))
    print(" " * 60, end="\r", file=sys.stderr)


def over(fn: Callable[[Any], object], items: Sequence[Any]) -> Callable[[], None]:
    def run() -> None:
        for item in items:
            fn(item)

    return run


def over2(fn: Callable[[Any, Any], object], items: Sequence[Any], arg: Any) -> Callable[[], None]:
    def run() -> None:
        for item in items:
            fn(item, arg)

    return run


# --------------------------------------------------------------------------- building the cases


@dataclass
class Prepared:
    version: str
    lines: list[bytes]
    lookup: Callable[[Any], str | None]
    ours: list[Any]
    refs: list[Any]
    dicts: list[Any]
    labels: list[tuple[str, str, str]]

    @property
    def nbytes(self) -> int:
        return sum(map(len, self.lines))


def prepare(
    version: str,
    lines: list[bytes],
    lookup: Callable[[Any], str | None],
    labels: list[tuple[str, str, str]],
) -> Prepared:
    codec = MODULES[version].CLIENT_CODEC
    ref = reference.CODECS[version]
    ours = [codec.decode(line, result_method=lookup) for line in lines]
    refs = [ref.decode(line, lookup) for line in lines]
    dicts = [msgspec.json.decode(line) for line in lines]
    return Prepared(version, lines, lookup, ours, refs, dicts, labels)


def check(p: Prepared) -> list[str]:
    """Every implementation gives the input back (as JSON), acpwire and the reference write
    the same bytes (a request's or notification's keys in the order peers write them), and the
    fast path is taken."""
    problems = []
    encode = MODULES[p.version].encode_message
    fast = MODULES[p.version].CLIENT_CODEC.fast_decoder
    ref = reference.CODECS[p.version]
    slow = 0
    for line, ours, refm, d in zip(p.lines, p.ours, p.refs, p.dicts, strict=True):
        if json.loads(encode(ours)) != d:
            problems.append(f"{p.version} acpwire round trip differs: {line[:120]!r}")
        if json.loads(ref.encode(refm)) != d:
            problems.append(f"{p.version} reference round trip differs: {line[:120]!r}")
        if encode(ours) != ref.encode(refm):  # the same bytes: peer key order on both sides
            problems.append(f"{p.version} acpwire and reference bytes differ: {line[:120]!r}")
        if "result" not in d:
            try:
                fast.decode(line)
            except msgspec.ValidationError:
                slow += 1
        elif type(ours).__name__ != "Response" or isinstance(ours.result, msgspec.Raw):
            problems.append(f"{p.version} response not typed: {line[:120]!r}")
    if slow:
        problems.append(f"{p.version}: {slow} requests/notifications missed the fast path")
    return problems[:10]


def codec_cases(p: Prepared, section: str) -> list[Case]:
    codec = MODULES[p.version].CLIENT_CODEC
    encode = MODULES[p.version].encode_message
    ref = reference.CODECS[p.version]
    n, nb = len(p.lines), p.nbytes
    dec, enc = f"{section} decode", f"{section} encode"
    dumps_kw = {"ensure_ascii": False, "separators": (",", ":")}
    return [
        Case(dec, "acpwire CLIENT_CODEC.decode", over2(codec.decode, p.lines, p.lookup), n, nb),
        Case(dec, "reference msgspec Structs", over2(ref.decode, p.lines, p.lookup), n, nb),
        Case(dec, "msgspec.json.decode -> dict", over(msgspec.json.decode, p.lines), n, nb),
        Case(dec, "orjson.loads -> dict", over(orjson.loads, p.lines), n, nb),
        Case(dec, "json.loads -> dict", over(json.loads, p.lines), n, nb),
        Case(enc, "acpwire encode_message", over(encode, p.ours), n, nb),
        Case(enc, "reference msgspec Structs", over(ref.encode, p.refs), n, nb),
        Case(enc, "msgspec.json.encode(dict)", over(msgspec.json.encode, p.dicts), n, nb),
        Case(enc, "orjson.dumps(dict)", over(orjson.dumps, p.dicts), n, nb),
        Case(
            enc,
            "json.dumps(dict)",
            over(lambda d: json.dumps(d, **dumps_kw).encode(), p.dicts),
            n,
            nb,
        ),
    ]


def sdk_cases(p: Prepared, sdk: Sdk, section: str) -> tuple[list[Case], list[str]]:
    n, nb = len(p.lines), p.nbytes
    dec, enc = f"{section} decode", f"{section} encode"
    models = [sdk.receive(line, p.lookup) for line in p.lines]
    envelopes = [sdk.validate_json(line) for line in p.lines]
    send_items = []
    for (kind, method, _), d, model in zip(p.labels, p.dicts, models, strict=True):
        send_items.append((kind, method, d.get("id"), model))
    notes = []
    changed: dict[str, int] = {}
    for item, d in zip(send_items, p.dicts, strict=True):
        for path in _json_diff(d, json.loads(sdk.send(item))):
            changed[path] = changed.get(path, 0) + 1
    if changed:
        what = ", ".join(
            f"{path} x{n}" for path, n in sorted(changed.items(), key=lambda kv: -kv[1])
        )
        notes.append(f"SDK send path does not give the input back: {what}")
    cases = [
        Case(
            dec,
            f"official SDK {sdk.version} receive path",
            over2(sdk.receive, p.lines, p.lookup),
            n,
            nb,
        ),
        Case(dec, "pydantic validate_json (SDK models)", over(sdk.validate_json, p.lines), n, nb),
        Case(enc, f"official SDK {sdk.version} send path", over(sdk.send, send_items), n, nb),
        Case(enc, "pydantic dump_json (SDK models)", over(sdk.dump_json, envelopes), n, nb),
    ]
    return cases, notes


def _json_diff(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two JSON values differ (paths with list indexes as [])."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}/{k} dropped" for k in a if k not in b]
        out += [f"{path}/{k} added" for k in b if k not in a]
        for k in a.keys() & b.keys():
            out += _json_diff(a[k], b[k], f"{path}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for x, y in zip(a, b, strict=True) for d in _json_diff(x, y, f"{path}[]")]
    return [] if a == b else [f"{path} changed"]


def forward_cases(p: Prepared) -> tuple[list[Case], list[str]]:
    """The corpus with 1 in forward.EVERY session/updates from a newer or looser peer
    (bench/forward.py): acpwire keeps them typed, the strict reference falls back to dicts."""
    lines, changed = forward.mix(p.lines, p.labels)
    codec = MODULES[p.version].CLIENT_CODEC
    encode = MODULES[p.version].encode_message
    ref = reference.CODECS[p.version]
    ref_decode = forward.with_dict_fallback(ref.decode, p.lookup)
    ours = [codec.decode(line, p.lookup) for line in lines]
    refs = [ref_decode(line) for line in lines]
    problems = [forward.check(ours[i], lines[i]) for i in changed]
    problems += [
        f"round trip: {line[:80]!r}"
        for line, m in zip(lines, ours, strict=True)
        if msgspec.json.decode(encode(m)) != msgspec.json.decode(line) and b'"_meta":42' not in line
    ]
    n, nb = len(lines), sum(map(len, lines))
    dec = f"{p.version} corpus + 1% forward-compatible decode"
    enc = f"{p.version} corpus + 1% forward-compatible encode"
    one = [lines[i] for i in changed]
    per_kind = f"{p.version} forward-compatible lines only decode ({len(one)} of {n})"
    cases = [
        Case(dec, "acpwire CLIENT_CODEC.decode", over2(codec.decode, lines, p.lookup), n, nb),
        Case(dec, "reference + dict fallback", over(ref_decode, lines), n, nb),
        Case(enc, "acpwire encode_message", over(encode, ours), n, nb),
        Case(enc, "reference + dict fallback", over(ref.encode, refs), n, nb),
        Case(
            per_kind,
            "acpwire CLIENT_CODEC.decode",
            over2(codec.decode, one, p.lookup),
            len(one),
            sum(map(len, one)),
        ),
        Case(
            per_kind,
            "reference + dict fallback",
            over(ref_decode, one),
            len(one),
            sum(map(len, one)),
        ),
    ]
    return cases, [x for x in problems if x]


def big_cases(version: str) -> list[Case]:
    line = corpus_mod.big_line(version)
    mod, ref = MODULES[version], reference.CODECS[version]
    ours = mod.CLIENT_CODEC.decode(line)
    refm = ref.decode(line, lambda _: None)
    d = orjson.loads(line)
    assert json.loads(mod.encode_message(ours)) == d and json.loads(ref.encode(refm)) == d
    nb = len(line)
    dec, enc = f"{version} 1 MB line decode", f"{version} 1 MB line encode"
    return [
        Case(dec, "acpwire CLIENT_CODEC.decode", lambda: mod.CLIENT_CODEC.decode(line), 1, nb),
        Case(dec, "reference msgspec Structs", lambda: ref.decode(line, lambda _: None), 1, nb),
        Case(dec, "orjson.loads -> dict", lambda: orjson.loads(line), 1, nb),
        Case(enc, "acpwire encode_message", lambda: mod.encode_message(ours), 1, nb),
        Case(enc, "reference msgspec Structs", lambda: ref.encode(refm), 1, nb),
        Case(enc, "orjson.dumps(dict)", lambda: orjson.dumps(d), 1, nb),
    ]


def variant_cases(p: Prepared, sdk: Sdk | None) -> list[Case]:
    """acpwire vs reference (and the SDK on v1, for the types it reads) per message type."""
    codec = MODULES[p.version].CLIENT_CODEC
    encode = MODULES[p.version].encode_message
    ref = reference.CODECS[p.version]
    groups: dict[str, list[int]] = {}
    for i, (kind, method, tag) in enumerate(p.labels):
        groups.setdefault(tag or f"{kind} {method}", []).append(i)
    cases = []
    for tag, idx in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        lines = [p.lines[i] for i in idx]
        ours = [p.ours[i] for i in idx]
        refs = [p.refs[i] for i in idx]
        n, nb = len(idx), sum(map(len, lines))
        sec = f"{p.version} {tag}"
        cases += [
            Case(sec, "decode acpwire", over2(codec.decode, lines, p.lookup), n, nb),
            Case(sec, "decode reference", over2(ref.decode, lines, p.lookup), n, nb),
            Case(sec, "encode acpwire", over(encode, ours), n, nb),
            Case(sec, "encode reference", over(ref.encode, refs), n, nb),
        ]
        if sdk is not None and p.version == "v1" and tag not in SDK_UNKNOWN:
            items = [
                (
                    p.labels[i][0],
                    p.labels[i][1],
                    p.dicts[i].get("id"),
                    sdk.receive(p.lines[i], p.lookup),
                )
                for i in idx
            ]
            cases += [
                Case(sec, "decode SDK", over2(sdk.receive, lines, p.lookup), n, nb),
                Case(sec, "encode SDK", over(sdk.send, items), n, nb),
            ]
    return cases


# --------------------------------------------------------------------------- memory


def memory_child(impl: str, version: str, messages: int, seed: str, count: int, mode: str) -> None:
    """Decode `count` session updates (cycling over the corpus) and hold their params."""
    import tracemalloc

    corpus = corpus_mod.load(version, messages, seed)
    lines = [
        line
        for line, (_, method, tag) in zip(corpus.lines, corpus.labels, strict=True)
        if method == "session/update" and (version == "v2" or tag not in SDK_UNKNOWN)
    ]
    if impl == "acpwire":
        decode = MODULES[version].CLIENT_CODEC.decode

        def one(line: bytes) -> Any:
            return decode(line).params
    elif impl == "reference":
        ref = reference.CODECS[version]

        def one(line: bytes) -> Any:
            return ref.decode(line, lambda _: None).params
    elif impl == "sdk":
        sdk = Sdk()

        def one(line: bytes) -> Any:
            return sdk.receive(line, lambda _: None)
    elif impl == "msgspec-dict":

        def one(line: bytes) -> Any:
            return msgspec.json.decode(line)["params"]
    else:
        raise SystemExit(f"unknown impl {impl}")
    for line in lines[:50]:
        one(line)  # warm caches (decoders, validators) before the baseline
    gc.collect()
    if mode == "tracemalloc":
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
    else:
        before = _rss()
    held = [one(lines[i % len(lines)]) for i in range(count)]
    gc.collect()
    after = tracemalloc.get_traced_memory()[0] if mode == "tracemalloc" else _rss()
    print(json.dumps({"bytes": after - before, "count": len(held)}))


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


SDK_UNKNOWN = {"notice", "compaction_update", "compaction_summary_chunk"}


def measure_memory(
    args: argparse.Namespace, sdk: Sdk | None
) -> list[tuple[str, str, float, float]]:
    rows = []
    for version in ("v2", "v1"):
        impls = ["acpwire", "reference", "msgspec-dict"] + (
            ["sdk"] if version == "v1" and sdk else []
        )
        for impl in impls:
            result = {}
            for mode in ("tracemalloc", "rss"):
                print(f"  memory: {version} {impl} {mode}", end="\r", file=sys.stderr, flush=True)
                out = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--memory-child",
                        impl,
                        version,
                        str(args.messages),
                        args.seed,
                        str(args.updates),
                        mode,
                    ],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                result[mode] = json.loads(out.splitlines()[-1])["bytes"]
            rows.append(
                (version, impl, result["tracemalloc"] / args.updates, result["rss"] / args.updates)
            )
    print(" " * 60, end="\r", file=sys.stderr)
    return rows


# --------------------------------------------------------------------------- report


def paired(a: Case, b: Case) -> float:
    """a's time / b's time: the median over rounds of the ratio within each round (both ran
    back to back in every round, so machine drift between rounds cancels out)."""
    return statistics.median(x / y for x, y in zip(a.samples, b.samples, strict=True))


def fmt_table(cases: Sequence[Case], sdk_name: str = "official SDK") -> list[str]:
    out = [
        f"{'case':44} {'µs/msg':>9} {'spread':>7} {'MB/s':>8} {'vs ref':>7} {'SDK ÷':>7}",
    ]
    sections: dict[str, list[Case]] = {}
    for case in cases:
        sections.setdefault(case.section, []).append(case)
    for section, group in sections.items():
        ref = next((c for c in group if c.name.startswith("reference")), None)
        sdk = next((c for c in group if c.name.startswith(sdk_name)), None)
        items, nbytes = group[0].items, group[0].nbytes
        out.append(f"-- {section} ({items} msgs, {nbytes / 1e6:.2f} MB)")
        for c in group:
            us = c.median * 1e6
            mbs = c.nbytes / c.items / c.median / 1e6
            vs_ref = f"{paired(c, ref):6.2f}x" if ref else ""
            vs_sdk = f"{1 / paired(c, sdk):6.1f}x" if sdk else ""
            out.append(
                f"  {c.name:42} {us:9.3f} {c.spread * 100:6.1f}% {mbs:8.1f} {vs_ref:>7} {vs_sdk:>7}"
            )
    return out


def fmt_variants(cases: Sequence[Case]) -> list[str]:
    """Ratios here are paired: the median over rounds of (acpwire / other) in the same round,
    which cancels most machine drift between rounds on these short samples."""
    out = [
        f"{'message type':34} {'msgs':>6} {'B/msg':>6} {'dec µs':>7} {'vs ref':>7} {'SDK ÷':>6}"
        f" {'enc µs':>7} {'vs ref':>7} {'SDK ÷':>6}"
    ]
    sections: dict[str, dict[str, Case]] = {}
    for c in cases:
        sections.setdefault(c.section, {})[c.name] = c

    for section, g in sections.items():
        d, e = g["decode acpwire"], g["encode acpwire"]
        dr, er = paired(d, g["decode reference"]), paired(e, g["encode reference"])
        ds = f"{1 / paired(d, g['decode SDK']):5.1f}x" if "decode SDK" in g else ""
        es = f"{1 / paired(e, g['encode SDK']):5.1f}x" if "encode SDK" in g else ""
        out.append(
            f"{section:34} {d.items:6d} {d.nbytes // d.items:6d} {d.median * 1e6:7.3f} "
            f"{dr:6.2f}x {ds:>6} {e.median * 1e6:7.3f} {er:6.2f}x {es:>6}"
        )
    return out


def find(cases: Sequence[Case], section: str, prefix: str) -> Case | None:
    return next((c for c in cases if c.section == section and c.name.startswith(prefix)), None)


def targets(cases: Sequence[Case], memory: list[tuple[str, str, float, float]]) -> list[str]:
    out = []

    def line(ok: bool, text: str) -> None:
        out.append(f"  [{'PASS' if ok else 'FAIL'}] {text}")

    for version in ("v2", "v1"):
        for op in ("decode", "encode"):
            ours = find(cases, f"{version} corpus {op}", "acpwire")
            ref = find(cases, f"{version} corpus {op}", "reference")
            if ours and ref:
                r = paired(ours, ref)
                line(
                    r <= 1.15, f"{version} {op} <= 1.15x reference over the whole corpus: {r:.2f}x"
                )
    for op in ("decode", "encode"):
        section = f"v2 corpus + 1% forward-compatible {op}"
        ours, ref = find(cases, section, "acpwire"), find(cases, section, "reference")
        if ours and ref:
            r = paired(ours, ref)
            line(
                r <= 1.15,
                f"v2 {op} <= 1.15x reference with 1% forward-compatible lines (unknown variants, "
                f"lenient fields; reference: dict fallback): {r:.2f}x",
            )
    for op, goal in (("decode", 8.0), ("encode", 12.0)):
        section = f"v1 SDK subset {op}"
        ours = find(cases, section, "acpwire")
        sdk = find(cases, section, "official SDK")
        if ours and sdk:
            r = 1 / paired(ours, sdk)
            line(r >= goal, f"v1 {op} >= {goal:.0f}x faster than the official SDK: {r:.1f}x")
    for version in ("v2", "v1"):
        mem = {impl: (t, rss) for v, impl, t, rss in memory if v == version}
        if "acpwire" in mem and "reference" in mem:
            (t, rss), (rt, rrss) = mem["acpwire"], mem["reference"]
            line(
                t <= rt * 1.001,
                f"{version} memory of decoded updates <= reference: {t:.0f} vs {rt:.0f} B/update "
                f"(tracemalloc; RSS {rss:.0f} vs {rrss:.0f})",
            )
    noisy = [
        c for c in cases if c.spread > 0.25 and not c.section.startswith(("v1 1 MB", "v2 1 MB"))
    ]
    if noisy:
        worst = max(noisy, key=lambda c: c.spread)
        out.append(
            f"  (machine busy: {len(noisy)} case(s) with spread > 25%, worst "
            f"{worst.spread * 100:.0f}% ({worst.section}: {worst.name}); ratios are paired per "
            "round, but rerun on a quiet machine before reading much into a near miss)"
        )
    return out


def header(args: argparse.Namespace, sdk: Sdk | None) -> list[str]:
    versions = {
        name: metadata.version(name) for name in ("msgspec", "orjson", "pydantic", "pydantic-core")
    }
    libs = ", ".join(f"{k} {v}" for k, v in versions.items())
    return [
        f"acpwire codec benchmark ({'quick' if args.quick else 'full'}), {time.strftime('%Y-%m-%d %H:%M')}",
        f"python {platform.python_version()} on {cpu_name()} ({os.cpu_count()} cpus); {libs}; "
        f"agent-client-protocol {sdk.version if sdk else 'n/a'}",
        corpus_mod.code_state(),
        f"corpus: make_streams.py --direction agent --messages {args.messages} --seed {args.seed}"
        f" (v2 and v1); {args.rounds} interleaved rounds, >= {args.target:.2f} s per sample; "
        "median per message, spread = (max - min) / median",
        "vs ref: time / reference time (1.00x = as fast as hand-written Structs); "
        "SDK ÷: SDK time / this time (how many times faster than the official SDK); both are "
        "medians of per-round ratios (the two cases ran back to back in each round)",
    ]


# --------------------------------------------------------------------------- main


def profile(args: argparse.Namespace) -> None:
    c = corpus_mod.load("v2", args.messages, args.seed)
    codec, encode = v2.CLIENT_CODEC, v2.encode_message
    lookup = c.result_method
    msgs = [codec.decode(line, result_method=lookup) for line in c.lines]
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(5):
        for line in c.lines:
            codec.decode(line, result_method=lookup)
        for m in msgs:
            encode(m)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small corpus, 3 rounds (smoke run)")
    parser.add_argument("--messages", type=int, help="corpus lines per version (full: 20000)")
    parser.add_argument("--seed", default="1")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--updates", type=int, help="decoded updates held for the memory figure")
    parser.add_argument("--no-variants", action="store_true", help="skip the per-variant table")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile acpwire over the v2 corpus"
    )
    parser.add_argument("--out", type=Path, help="default: bench/results/codec[-quick].txt")
    parser.add_argument("--memory-child", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        impl, version, messages, seed, count, mode = args.memory_child
        memory_child(impl, version, int(messages), seed, int(count), mode)
        return
    args.messages = args.messages or (2000 if args.quick else 20000)
    args.rounds = args.rounds or (3 if args.quick else 11)
    args.updates = args.updates or (10_000 if args.quick else 100_000)
    args.target = 0.01 if args.quick else 0.05
    args.out = args.out or corpus_mod.RESULTS / ("codec-quick.txt" if args.quick else "codec.txt")
    if args.profile:
        profile(args)
        return

    problems = reference.check_against_schema()
    sdk = load_sdk()
    cases: list[Case] = []
    variant: list[Case] = []
    notes: list[str] = []
    for version in ("v2", "v1"):
        c = corpus_mod.load(version, args.messages, args.seed)
        p = prepare(version, c.lines, c.result_method, c.labels)
        problems += check(p)
        cases += codec_cases(p, f"{version} corpus")
        if version == "v2":
            more, forward_problems = forward_cases(p)
            cases += more
            problems += forward_problems
        if not args.quick and not args.no_variants:
            variant += variant_cases(p, sdk)
        if version == "v1" and sdk is not None:
            keep = [i for i, (_, _, tag) in enumerate(c.labels) if tag not in SDK_UNKNOWN]
            sub = prepare(
                version, [c.lines[i] for i in keep], c.result_method, [c.labels[i] for i in keep]
            )
            section = "v1 SDK subset"
            notes.append(
                f"v1 SDK subset: {len(keep)} of {len(c.lines)} lines; the {len(c.lines) - len(keep)} "
                f"{'/'.join(sorted(SDK_UNKNOWN))} updates fail the SDK's validation (schema v1.19.0)"
            )
            subset = [
                x
                for x in codec_cases(sub, section)
                if x.name.startswith(("acpwire", "reference", "json."))
            ]
            more, sdk_notes = sdk_cases(sub, sdk, section)
            notes += sdk_notes
            # keep decode rows together, then encode rows
            cases += [x for x in subset + more if x.section.endswith("decode")]
            cases += [x for x in subset + more if x.section.endswith("encode")]
    for version in ("v2", "v1"):
        cases += big_cases(version)
    if problems:
        print("CHECK FAILED:\n  " + "\n  ".join(problems))
        raise SystemExit(1)

    # The prepared inputs (millions of dicts and models) must not be traversed by the cyclic
    # GC during timing: that would bill collections of *our* data to whichever case happens
    # to allocate (json.loads, pydantic). Frozen objects are ignored by every collection.
    gc.collect()
    gc.freeze()
    run_rounds(cases, args.rounds, args.target, "codec")
    if variant:
        run_rounds(variant, args.rounds, args.target / 3, "variants")
    memory = [] if args.no_memory else measure_memory(args, sdk)

    report = [*header(args, sdk), "", *fmt_table(cases)]
    if variant:
        report += [
            "",
            "per message type: acpwire µs/msg (median); vs ref and SDK ÷ are paired per round (median of "
            "acpwire/other within each round)",
        ]
        report += fmt_variants(variant)
    if memory:
        report += [
            "",
            f"memory held by {args.updates} decoded session updates (params kept; v1: SDK-readable updates)",
        ]
        report.append(
            f"  {'':18} {'B/update (tracemalloc)':>24} {'B/update (RSS delta)':>22} {'vs ref':>7}"
        )
        refs = {v: t for v, impl, t, _ in memory if impl == "reference"}
        for version, impl, t, rss in memory:
            report.append(f"  {version} {impl:15} {t:24.0f} {rss:22.0f} {t / refs[version]:6.2f}x")
    report += ["", "targets", *targets(cases, memory)]
    if notes:
        report += ["", "notes"] + [f"  {n}" for n in notes]
    publish("\n".join(report), args.out)


if __name__ == "__main__":
    main()
