// ACP v2 (draft) agent built on the official TypeScript SDK's experimental v2 API.
// Usage: node agent_v2.mjs [--stream N] [--no-session-capability]   (stdout = protocol, stderr = logs)
//
// v2 lifecycle: session/prompt is answered as soon as the prompt is accepted
// ({ messageId }); the turn itself is reported with session/update
// user_message, state_update running / requires_action / idle + stopReason.
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { pathToFileURL } from "node:url";
import { agentStdio, logger, parseArgs, sleep, streamCount } from "./common.mjs";

const log = logger("ts-agent-v2");
const args = parseArgs();
const { agent: A, client: C } = acp.methods;
const sessions = new Map(); // sessionId -> { turn: AbortController | null, idle: Promise }
let nextSession = 0;
let nextMessage = 0;

const textOf = (prompt) => prompt.filter((b) => b.type === "text").map((b) => b.text).join(" ");

async function runTurn(client, sessionId, prompt, userMessageId, signal) {
  const update = (u) => client.notify(C.session.update, { sessionId, update: u });
  const state = (s, extra = {}) => update({ sessionUpdate: "state_update", state: s, ...extra });
  const agentMessageId = `msg_agent_${++nextMessage}`;
  const say = (text) =>
    update({ sessionUpdate: "agent_message_chunk", messageId: agentMessageId, content: { type: "text", text } });
  const text = textOf(prompt);

  await update({ sessionUpdate: "user_message", messageId: userMessageId, content: prompt });
  await state("running");
  const n = streamCount(args, text);
  if (n > 0) {
    for (let i = 0; i < n; i++) await say(`chunk ${i} `);
    return "end_turn";
  }
  if (text.includes("slow")) {
    for (let i = 0; i < 200 && !signal.aborted; i++) {
      await say(`slow ${i} `);
      await sleep(50, signal);
    }
    return signal.aborted ? "cancelled" : "end_turn";
  }
  for (const t of ["Hello ", "from ", "the TS v2 agent. "]) await say(t);
  const toolCall = { toolCallId: "call_1", title: "Read README.md", kind: "read", status: "pending" };
  await update({ sessionUpdate: "tool_call_update", ...toolCall });
  await state("requires_action");
  let outcome;
  try {
    ({ outcome } = await client.request(
      C.session.requestPermission,
      {
        sessionId,
        title: "Allow reading README.md?",
        subject: { type: "tool_call", toolCall },
        options: [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      },
      // On session/cancel or session/close: send $/cancel_request, stop waiting.
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    ));
  } catch (err) {
    if (!signal.aborted) throw err;
    outcome = { outcome: "cancelled" };
  }
  if (signal.aborted || outcome.outcome === "cancelled") {
    await update({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "cancelled" });
    return "cancelled";
  }
  await state("running");
  if (outcome.optionId !== "allow") {
    await update({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "failed" });
    await say("Permission denied. ");
    return "end_turn";
  }
  await update({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "in_progress" });
  await update({
    sessionUpdate: "tool_call_content_chunk",
    toolCallId: "call_1",
    content: { type: "content", content: { type: "text", text: "# README" } },
  });
  await update({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "completed" });
  for (const t of ["The tool ", "finished. ", "Done."]) await say(t);
  return "end_turn";
}

async function onPrompt({ params, client }) {
  const session = sessions.get(params.sessionId);
  if (!session) throw acp.RequestError.sessionNotFound(params.sessionId);
  await session.idle; // hold a prompt sent while busy until the previous work is idle
  const turn = new AbortController();
  const messageId = `msg_user_${++nextMessage}`;
  session.turn = turn;
  session.idle = new Promise((resolve) => {
    setImmediate(async () => {
      let stopReason;
      try {
        stopReason = await runTurn(client, params.sessionId, params.prompt, messageId, turn.signal);
      } catch (err) {
        log("turn failed:", err);
        stopReason = turn.signal.aborted ? "cancelled" : "refusal";
      }
      session.turn = null;
      await client
        .notify(C.session.update, { sessionId: params.sessionId, update: { sessionUpdate: "state_update", state: "idle", stopReason } })
        .catch((err) => log("idle update failed:", err));
      resolve();
    });
  });
  return { messageId }; // accepted; completion is reported via state_update idle
}

/** The agent app (unconnected): stdio below, or the remote server (remote_agent.mjs). */
export function agentV2() {
  return acp
    .agent({ name: "interop-ts-agent-v2" })
    .onRequest(A.initialize, ({ params }) => {
      log("initialize, client asked for protocol", params.protocolVersion);
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        info: { name: "interop-ts-agent-v2", version: "2.4.0" },
        // `session: {}` advertises the baseline session methods: new, list, resume, close,
        // prompt, cancel (and session/update); all are served below. With
        // --no-session-capability it advertises none (for a client's fallback to session/new).
        capabilities: process.argv.includes("--no-session-capability") ? {} : { session: {} },
      };
    })
    .onRequest(A.session.new, ({ params }) => {
      const sessionId = `sess_ts_v2_${++nextSession}`;
      sessions.set(sessionId, { cwd: params.cwd, turn: null, idle: Promise.resolve() });
      return { sessionId };
    })
    .onRequest(A.session.list, ({ params }) => ({
      sessions: [...sessions]
        .filter(([, s]) => params.cwd == null || s.cwd === params.cwd)
        .map(([sessionId, s]) => ({ sessionId, cwd: s.cwd })),
    }))
    .onRequest(A.session.resume, async ({ params, client }) => {
      const session = sessions.get(params.sessionId);
      if (!session) throw acp.RequestError.sessionNotFound(params.sessionId);
      // No history is kept to replay; the current-state snapshot comes before the response.
      const update = session.turn ? { state: "running" } : { state: "idle" };
      await client.notify(C.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: "state_update", ...update },
      });
      return {};
    })
    .onRequest(A.session.prompt, onPrompt)
    .onNotification(A.session.cancel, ({ params }) => {
      log("cancel", params.sessionId);
      sessions.get(params.sessionId)?.turn?.abort();
    })
    .onRequest(A.session.close, async ({ params }) => {
      log("close", params.sessionId);
      const session = sessions.get(params.sessionId);
      if (!session) return {};
      session.turn?.abort();
      await session.idle;
      sessions.delete(params.sessionId);
      return {};
    });
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  agentV2()
    .connect(agentStdio(acp.ndJsonStream))
    .closed.then(() => log("connection closed"));
}
