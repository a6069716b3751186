// The official TypeScript SDK's experimental remote server (AcpServer with its Node adapter)
// serving the interop agents (agent_v1.mjs, agent_v2.mjs behind the SDK's protocol router).
// Usage: node remote_agent.mjs [--http2]
//   default: node:http (HTTP/1.1): Streamable HTTP and the WebSocket upgrade on one port
//   --http2: node:http2 cleartext (prior knowledge), Streamable HTTP only
// The first stdout line is {"url": "http://127.0.0.1:PORT/acp"}; it serves until stdin closes.
import http from "node:http";
import http2 from "node:http2";
import { agentProtocolRouter } from "@agentclientprotocol/sdk/experimental/v2";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import {
  createNodeHttpHandler,
  createNodeWebSocketUpgradeHandler,
} from "@agentclientprotocol/sdk/experimental/node";
import { WebSocketServer } from "ws";
import { agentV1 } from "./agent_v1.mjs";
import { agentV2 } from "./agent_v2.mjs";
import { logger } from "./common.mjs";

const log = logger("ts-remote-agent");
const useHttp2 = process.argv.includes("--http2");
const server = new AcpServer({ createAgent: () => agentProtocolRouter().withV1(agentV1()).withV2(agentV2()) });
const handle = createNodeHttpHandler(server);

let listener;
if (useHttp2) {
  // The Node adapter reads node:http's request; over node:http2's compatibility API the
  // request's headers also list the pseudo-headers (:method, :path, ...), which a fetch
  // `Headers` refuses: the adapter gets a view of the request without them (and with the
  // `host` it reads, from :authority).
  listener = http2.createServer((req, res) => {
    const headers = { host: req.headers[":authority"] };
    for (const [name, value] of Object.entries(req.headers)) if (!name.startsWith(":")) headers[name] = value;
    const view = new Proxy(req, {
      get(target, name) {
        if (name === "headers") return headers;
        const value = Reflect.get(target, name, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    handle(view, res);
  });
} else {
  listener = http.createServer(handle);
  const sockets = new WebSocketServer({ noServer: true });
  listener.on("upgrade", createNodeWebSocketUpgradeHandler(server, sockets));
}

listener.listen(0, "127.0.0.1", () => {
  const { port } = listener.address();
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}/acp` }));
});

process.stdin.resume();
process.stdin.on("end", async () => {
  log("stdin closed: stopping");
  await server.close();
  listener.close();
  process.exit(0);
});
