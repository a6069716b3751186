// ACP v1 agent built on the official TypeScript SDK (@agentclientprotocol/sdk).
// Usage: node agent_v1.mjs [--stream N]      (stdout = protocol, stderr = logs)
import * as acp from "@agentclientprotocol/sdk";
import { pathToFileURL } from "node:url";
import { agentStdio, logger, parseArgs, sleep, streamCount } from "./common.mjs";

const log = logger("ts-agent-v1");
const args = parseArgs();
const { agent: A, client: C } = acp.methods;
const sessions = new Map(); // sessionId -> { turn: AbortController | null }
let nextSession = 0;

const textOf = (prompt) => prompt.filter((b) => b.type === "text").map((b) => b.text).join(" ");

async function runPrompt({ params, client }) {
  const { sessionId } = params;
  const session = sessions.get(sessionId);
  if (!session) throw acp.RequestError.sessionNotFound(sessionId);
  const turn = new AbortController();
  session.turn = turn;
  const update = (u) => client.notify(C.session.update, { sessionId, update: u });
  const say = (text) => update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
  const text = textOf(params.prompt);
  try {
    const n = streamCount(args, text);
    if (n > 0) {
      for (let i = 0; i < n; i++) await say(`chunk ${i} `);
      return { stopReason: "end_turn" };
    }
    if (text.includes("slow")) {
      for (let i = 0; i < 200 && !turn.signal.aborted; i++) {
        await say(`slow ${i} `);
        await sleep(50, turn.signal);
      }
      return { stopReason: turn.signal.aborted ? "cancelled" : "end_turn" };
    }
    for (const t of ["Hello ", "from ", "the TS v1 agent. "]) await say(t);
    const toolCall = { toolCallId: "call_1", title: "Read README.md", kind: "read", status: "pending" };
    await update({ sessionUpdate: "tool_call", ...toolCall });
    const { outcome } = await client.request(C.session.requestPermission, {
      sessionId,
      toolCall,
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    if (turn.signal.aborted || outcome.outcome === "cancelled") {
      await update({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "cancelled" });
      return { stopReason: "cancelled" };
    }
    if (outcome.optionId !== "allow") {
      await update({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "failed" });
      await say("Permission denied. ");
      return { stopReason: "end_turn" };
    }
    await update({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "in_progress" });
    await update({
      sessionUpdate: "tool_call_update",
      toolCallId: "call_1",
      status: "completed",
      content: [{ type: "content", content: { type: "text", text: "# README" } }],
    });
    for (const t of ["The tool ", "finished. ", "Done."]) await say(t);
    return { stopReason: "end_turn" };
  } finally {
    session.turn = null;
  }
}

/** The agent app (unconnected): stdio below, or the remote server (remote_agent.mjs). */
export function agentV1() {
  return acp
    .agent({ name: "interop-ts-agent-v1" })
    .onRequest(A.initialize, ({ params }) => {
      log("initialize, client asked for protocol", params.protocolVersion);
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: { sessionCapabilities: { close: {} } },
        agentInfo: { name: "interop-ts-agent-v1", version: "2.4.0" },
        authMethods: [],
      };
    })
    .onRequest(A.session.new, () => {
      const sessionId = `sess_ts_v1_${++nextSession}`;
      sessions.set(sessionId, { turn: null });
      return { sessionId };
    })
    .onRequest(A.session.prompt, runPrompt)
    .onNotification(A.session.cancel, ({ params }) => {
      log("cancel", params.sessionId);
      sessions.get(params.sessionId)?.turn?.abort();
    })
    .onRequest(A.session.close, ({ params }) => {
      log("close", params.sessionId);
      sessions.get(params.sessionId)?.turn?.abort();
      sessions.delete(params.sessionId);
      return {};
    });
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  agentV1()
    .connect(agentStdio(acp.ndJsonStream))
    .closed.then(() => log("connection closed"));
}
