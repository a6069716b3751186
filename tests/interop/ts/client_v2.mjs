// ACP v2 (draft) client built on the official TypeScript SDK's experimental v2 API.
// Usage: node client_v2.mjs [--stream N | --roundtrips N] (-- <agent command...> | --url URL [--transport http|websocket])
// Last stdout line is a JSON summary; exit code 0 iff it says "ok": true.
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { finish, logger, openAgent, parseArgs, sessionRoundtrips } from "./common.mjs";

const log = logger("ts-client-v2");
const args = parseArgs();
const { agent: A, client: C } = acp.methods;
const agentProc = await openAgent(acp.ndJsonStream, args);
const summary = { ok: false, protocolVersion: null, updates: {}, permissionRequests: 0, errors: [] };
const check = (cond, msg) => { if (!cond) summary.errors.push(msg); };
let cancelSent = false;

const app = acp.client({ name: "interop-ts-client-v2" }).onRequest(C.session.requestPermission, ({ params }) => {
  summary.permissionRequests++;
  if (cancelSent) return { outcome: { outcome: "cancelled" } };
  const allow = params.options.find((o) => o.kind === "allow_once" || o.kind === "allow_always");
  if (!allow) throw new Error("no allow option offered");
  return { outcome: { outcome: "selected", optionId: allow.optionId } };
});

/**
 * Send one prompt and drain updates until the session reports idle.
 * v2: the prompt response only carries the accepted user message's id.
 */
async function turn(ctx, session, text, { cancelAfterChunks = 0, count = true } = {}) {
  const accepted = session.prompt(text);
  accepted.catch(() => {});
  let chunks = 0;
  let userMessageId = null;
  const states = [];
  for (;;) {
    const msg = await session.nextUpdate();
    const kind = msg.update.sessionUpdate;
    if (count) summary.updates[kind] = (summary.updates[kind] ?? 0) + 1;
    if (msg.kind === "stop") {
      states.push("idle");
      const { messageId } = await accepted; // PromptResponse { messageId }
      if (userMessageId !== messageId) summary.errors.push(`user_message id ${userMessageId} != prompt response ${messageId}`);
      return { stopReason: msg.stopReason, chunks, states, messageId };
    }
    if (kind === "state_update") states.push(msg.update.state);
    if (kind === "user_message") userMessageId = msg.update.messageId;
    if (kind === "agent_message_chunk" && ++chunks === cancelAfterChunks) {
      cancelSent = true;
      await ctx.notify(A.session.cancel, { sessionId: session.sessionId });
    }
  }
}

try {
  await app.connectWith(agentProc.stream, async (ctx) => {
    const init = await ctx.request(A.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "interop-ts-client-v2", version: "2.4.0" },
      capabilities: {},
    });
    summary.protocolVersion = init.protocolVersion;
    check(init.protocolVersion === 2, `protocolVersion ${init.protocolVersion} != 2`);
    const newSession = { cwd: process.cwd(), mcpServers: [] };
    const session = await ctx.buildSession(newSession).start();
    try {
      if (args.roundtrips > 0) {
        const send = () => ctx.request(A.session.new, newSession);
        await sessionRoundtrips(summary, check, args.roundtrips, send);
        return;
      }
      if (args.stream > 0) {
        const t0 = performance.now();
        const { stopReason, chunks } = await turn(ctx, session, `stream ${args.stream}`, { count: false });
        const seconds = (performance.now() - t0) / 1000;
        Object.assign(summary, { chunks, seconds, msgsPerSec: Math.round(chunks / seconds), stopReason });
        check(chunks === args.stream, `got ${chunks} chunks, expected ${args.stream}`);
        check(stopReason === "end_turn", `stream stopReason ${stopReason}`);
        delete summary.updates;
        return;
      }
      const p1 = await turn(ctx, session, "Please read the README");
      summary.prompt1StopReason = p1.stopReason;
      summary.prompt1States = p1.states;
      summary.prompt1MessageId = p1.messageId;
      check(p1.stopReason === "end_turn", `prompt1 stopReason ${p1.stopReason}`);
      check(p1.states.join() === "running,requires_action,running,idle", `prompt1 states ${p1.states}`);
      check(summary.permissionRequests === 1, `permissionRequests ${summary.permissionRequests} != 1`);
      check((summary.updates.tool_call_update ?? 0) >= 2, "expected tool_call_update pending + completed");

      const p2 = await turn(ctx, session, "Please be slow", { cancelAfterChunks: 3 });
      summary.prompt2StopReason = p2.stopReason;
      summary.prompt2Chunks = p2.chunks;
      check(p2.stopReason === "cancelled", `prompt2 stopReason ${p2.stopReason}`);
      check(p2.chunks < 200, `prompt2 was not cut short (${p2.chunks} chunks)`);

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
const exit = await agentProc.stop();
check(exit.code === 0, `agent exited with ${JSON.stringify(exit)}`);
finish(summary);
