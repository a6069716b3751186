// Shared helpers for the interop peers (transport glue, CLI parsing, summary).
// Nothing protocol-specific lives here; each peer uses the SDK directly.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

/** Log to stderr (stdout is the protocol channel for agents). */
export function logger(tag) {
  return (...args) => console.error(`[${tag}]`, ...args);
}

/**
 * Parse `[--stream N] [--roundtrips N] [--url URL [--transport http|websocket]] [-- agent cmd...]`
 * (absent numbers are 0). `--stream N` may also come from ACP_INTEROP_STREAM (agents only).
 */
export function parseArgs(argv = process.argv.slice(2)) {
  const sep = argv.indexOf("--");
  const own = sep >= 0 ? argv.slice(0, sep) : argv;
  const command = sep >= 0 ? argv.slice(sep + 1) : [];
  const number = (flag) => {
    const i = own.indexOf(flag);
    return i >= 0 ? Number(own[i + 1]) : 0;
  };
  const text = (flag, fallback) => {
    const i = own.indexOf(flag);
    return i >= 0 ? own[i + 1] : fallback;
  };
  return {
    stream: number("--stream"),
    roundtrips: number("--roundtrips"),
    url: text("--url", null),
    transport: text("--transport", "http"),
    command,
  };
}

/** N from `--stream N` / ACP_INTEROP_STREAM, or from a prompt text "stream N". */
export function streamCount(args, promptText) {
  if (args.stream > 0) return args.stream;
  const env = Number(process.env.ACP_INTEROP_STREAM || 0);
  if (env > 0) return env;
  const m = /^\s*stream\s+(\d+)\s*$/.exec(promptText);
  return m ? Number(m[1]) : 0;
}

/** The agent side of stdio: read stdin, write stdout. */
export function agentStdio(ndJsonStream) {
  return ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
}

/** Spawn the agent command; its stderr goes straight to ours. */
export function spawnAgent(ndJsonStream, command) {
  if (command.length === 0) {
    throw new Error("usage: client.mjs [--stream N | --roundtrips N] -- <agent command...>");
  }
  const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  return { child, exited, stream };
}

/**
 * The agent a client talks to: the remote one at `--url` (the SDK's experimental Streamable
 * HTTP or WebSocket client), or the command after `--`, spawned. `stop()` resolves to the
 * exit status (`{code: 0}` for a remote agent, whose connection the SDK ends itself).
 */
export async function openAgent(ndJsonStream, args) {
  if (args.url === null) {
    const proc = spawnAgent(ndJsonStream, args.command);
    return { stream: proc.stream, stop: () => stopAgent(proc) };
  }
  let stream;
  if (args.transport === "websocket") {
    const { createWebSocketStream } = await import("@agentclientprotocol/sdk/experimental/ws-client");
    const { WebSocket } = await import("ws");
    stream = createWebSocketStream(args.url, { WebSocket });
  } else {
    const { createHttpStream } = await import("@agentclientprotocol/sdk/experimental/http-client");
    stream = createHttpStream(args.url);
  }
  return { stream, stop: async () => ({ code: 0 }) };
}

/** Close the agent's stdin and wait (bounded) for it to exit. */
export async function stopAgent({ child, exited }, timeoutMs = 3000) {
  child.stdin.end();
  const timer = setTimeout(() => child.kill("SIGTERM"), timeoutMs);
  const result = await exited;
  clearTimeout(timer);
  return result;
}

export function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

/**
 * Round-trip benchmark: await `request()` `warmup` times, then `n` more times, one at a time,
 * timing each of the `n` from just before the call until its response resolves.
 * Every response is passed to `isValid`; `invalid` counts those it rejects.
 */
export async function measureRoundtrips(n, request, isValid, warmup = 100) {
  let invalid = 0;
  const call = async () => {
    const t = performance.now();
    const response = await request();
    const ms = performance.now() - t;
    if (!isValid(response)) invalid++;
    return ms;
  };
  for (let i = 0; i < warmup; i++) await call();
  const times = [];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) times.push(await call());
  const seconds = (performance.now() - t0) / 1000;
  return { roundtrips: n, ...latencyStats(times), seconds, invalid };
}

/**
 * `--roundtrips N` mode of the clients: time `session/new` round trips (`send()`), put the
 * figures in the summary and check that every response has a sessionId.
 */
export async function sessionRoundtrips(summary, check, n, send) {
  const hasId = (r) => typeof r?.sessionId === "string";
  const { invalid, ...stats } = await measureRoundtrips(n, send, hasId);
  Object.assign(summary, stats);
  check(invalid === 0, `${invalid} session/new responses without a sessionId`);
  delete summary.updates;
}

/** p50/p99 (nearest rank), mean and max of `times` (ms, non-empty), rounded to 4 decimals. */
export function latencyStats(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const rank = (p) => sorted[Math.ceil((p / 100) * sorted.length) - 1];
  const ms = (x) => Math.round(x * 1e4) / 1e4;
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return { p50Ms: ms(rank(50)), p99Ms: ms(rank(99)), meanMs: ms(mean), maxMs: ms(sorted.at(-1)) };
}

/** Print the JSON summary as the last stdout line and exit accordingly. */
export function finish(summary) {
  summary.ok = summary.errors.length === 0;
  process.stdout.write(JSON.stringify(summary) + "\n", () => process.exit(summary.ok ? 0 : 1));
}
