"""JSON-RPC over a byte stream, with no sessions and no sides (private): framing (lines in
and out), the outbox (the bounded send path), the sans-IO JSON-RPC core, the connection (tasks,
cancellation, shutdown), dispatch (a call to its handler) and the protocol versions."""
