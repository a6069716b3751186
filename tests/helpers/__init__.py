"""What the tests share (a test module never imports another test module or conftest):

- `helpers.paths`: the repository's root, for files the tests read and peers they run.
- `helpers.loops`: async waits that work on every test loop (`until`, `wait_all_tasks_blocked`),
  `run_async` for a sync test that runs a coroutine on its `loop`, and `acpwire_tasks`.
- `helpers.raw`: `RawPeer`, the far end of a connection in raw JSON lines, and the JSON-RPC
  builders (`request`, `notification`, `response`, `error_response`, `cancel_request`).
- `helpers.lines`: ACP lines as raw JSON (session updates, prompts, their answers).
- `helpers.folds`: session updates as raw JSON, decoded and folded into a session state.
- `helpers.constants`: shared messages, typed (`INIT_V2`, `PERMISSION_REQUEST`, ...) and raw
  (`RAW_INIT_V2`, ...).
- `helpers.surfaces`: the protocol surfaces the tests run on (`ACPWIRE_TEST_SURFACES`; the
  `surface`, `v2_surface`, `v1_surface` arguments) and what a test needs on any one of them.
- `helpers.clients`: typed test clients (`ClientV2` logs what the agent sends, `TurnClientV2`
  hands permission requests to a turn; `recording_client(surface)` and `turn_client(surface)`
  the same on any surface) and `describe` of what they logged.
- `helpers.agents`: the echo agent on any surface (`echo_agent(surface)`).
- `helpers.serving`: an agent and a client run in-process over `acpwire.testing` streams, either
  side raw (`raw_client`, `session`, `raw_agent`) or both typed (`pair`); only the front door.
- `helpers.connection`: a bare `Connection` with scripted handlers and its raw peer (wire tests).
- `helpers.processes`: subprocess peers: `python(code)`, `loop_script`, `PYTHONPATH`;
  `bindings_only(code)` in a fresh interpreter that sees generated/ only.
- `helpers.remote` (`served`: an `AgentApp` under `serve_remote`; `Tls`; `raw_client`) and
  `helpers.asgi_servers` (any ASGI app under Hypercorn or uvicorn).
- `helpers.hello_turns`: `hello_turn(conn)`, one turn of the hello agent over a connection;
  `said(conn)`, the text chunks of one turn in a new session.
- `helpers.typecheck`: `mypy --strict` on a user's snippet.
- `helpers.remote` (an `agent_app` served in-process, TLS, raw HTTP), `helpers.durable` (the
  turn the durability tests run and resume, a state `described` to compare),
  `helpers.redis_server` (a real Redis server the test starts), `helpers.relay` (a TCP relay
  a test cuts, as a network drop).
- `helpers.raw_websocket`: WebSocket frames by hand, malformed on request (`frame`), parsed
  either way (`Frames`), and a client on a bare socket (`RawWebSocket`);
  `helpers.hand_websocket_server`: a WebSocket server written by hand (`hand_server`,
  `upgraded` with any `Sec-WebSocket-Accept`, `read_client_frame`; `deaf_server`, one that
  reads nothing after the upgrade);
  `helpers.raw_h2`: an HTTP/2 client by hand (`connected(url)`: a GET, a stream reset, the
  connection dropped);
  `helpers.websocket_tap`: a relay that reads the frames both ways and puts its own (pings,
  closes, malformed frames) before a client (`WebSocketTap`).
- `helpers.commands`: the `acpwire` command run as a process (`acpwire(...)`, `start`,
  `start_with_terminal` on a pty) and the agents it runs.
- `helpers.traces`: a hand-written trace breaking each rule `acpwire show` checks
  (`broken_trace`) and the findings it must produce (`expected_findings`).
- `helpers.strategies` (hypothesis strategies from the generator's IR) and `helpers.reporting`
  (`json_diff`, `write_summary`).
"""
