// ACP v2 client of the official TypeScript SDK's experimental remote transports.
// Usage: node remote_client_v2.mjs --url URL --transport http|websocket
// Runs the client_v2 scenario's first prompt (permission allowed) and a cancelled one, then
// session/close; the last stdout line is a JSON summary (exit 0 iff "ok": true).
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";
import { finish, logger } from "./common.mjs";

const log = logger("ts-remote-client-v2");
const argv = process.argv.slice(2);
const opt = (flag) => argv[argv.indexOf(flag) + 1];
const url = opt("--url");
const transport = opt("--transport");
const { agent: A, client: C } = acp.methods;
const summary = { ok: false, transport, protocolVersion: null, updates: {}, permissionRequests: 0, errors: [] };
const check = (cond, msg) => { if (!cond) summary.errors.push(msg); };
let cancelSent = false;

const app = acp.client({ name: "interop-ts-remote-client-v2" }).onRequest(C.session.requestPermission, ({ params }) => {
  summary.permissionRequests++;
  if (cancelSent) return { outcome: { outcome: "cancelled" } };
  const allow = params.options.find((o) => o.kind === "allow_once" || o.kind === "allow_always");
  return { outcome: { outcome: "selected", optionId: allow.optionId } };
});

async function turn(ctx, session, text, { cancelAfterChunks = 0 } = {}) {
  const accepted = session.prompt(text);
  accepted.catch(() => {});
  let chunks = 0;
  for (;;) {
    const msg = await session.nextUpdate();
    const kind = msg.update.sessionUpdate;
    summary.updates[kind] = (summary.updates[kind] ?? 0) + 1;
    if (msg.kind === "stop") return { stopReason: msg.stopReason, chunks };
    if (kind === "agent_message_chunk" && ++chunks === cancelAfterChunks) {
      cancelSent = true;
      await ctx.notify(A.session.cancel, { sessionId: session.sessionId });
    }
  }
}

const stream = transport === "websocket" ? createWebSocketStream(url, { WebSocket }) : createHttpStream(url);
try {
  await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(A.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "interop-ts-remote-client-v2", version: "2.4.0" },
      capabilities: {},
    });
    summary.protocolVersion = init.protocolVersion;
    const session = await ctx.buildSession({ cwd: process.cwd(), mcpServers: [] }).start();
    try {
      const p1 = await turn(ctx, session, "Please read the README");
      summary.prompt1StopReason = p1.stopReason;
      check(p1.stopReason === "end_turn", `prompt1 stopReason ${p1.stopReason}`);
      const p2 = await turn(ctx, session, "Please be slow", { cancelAfterChunks: 3 });
      summary.prompt2StopReason = p2.stopReason;
      summary.prompt2Chunks = p2.chunks;
      await ctx.request(A.session.close, { sessionId: session.sessionId });
      summary.sessionClosed = true;
    } finally {
      session.dispose();
    }
  });
} catch (err) {
  log("error:", err);
  summary.errors.push(String(err?.message ?? err));
}
finish(summary);
