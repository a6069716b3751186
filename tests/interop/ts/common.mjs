// Shared helpers for the interop peers (transport glue, CLI parsing, summary).
// Nothing protocol-specific lives here; each peer uses the SDK directly.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

/** Log to stderr (stdout is the protocol channel for agents). */
export function logger(tag) {
  return (...args) => console.error(`[${tag}]`, ...args);
}

/**
 * Parse `[--stream N] [-- agent cmd...]`.
 * `--stream N` may also come from ACP_INTEROP_STREAM (agents only).
 */
export function parseArgs(argv = process.argv.slice(2)) {
  const sep = argv.indexOf("--");
  const own = sep >= 0 ? argv.slice(0, sep) : argv;
  const command = sep >= 0 ? argv.slice(sep + 1) : [];
  let stream = 0;
  const i = own.indexOf("--stream");
  if (i >= 0) stream = Number(own[i + 1]);
  return { stream, command };
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
  if (command.length === 0) throw new Error("usage: client.mjs [--stream N] -- <agent command...>");
  const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  return { child, exited, stream };
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

/** Print the JSON summary as the last stdout line and exit accordingly. */
export function finish(summary) {
  summary.ok = summary.errors.length === 0;
  process.stdout.write(JSON.stringify(summary) + "\n", () => process.exit(summary.ok ? 0 : 1));
}
