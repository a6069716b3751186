# Hand-written part of acp_schema (not generated): edit it here; codegen copies it into builds.
"""The hand-written runtime support of the generated bindings, one module per job.

- `schema`: the markers the generated types are built from (open unions and enums,
  leniency flags, merged-union checks);
- `fallback`: decoding what msgspec's strict fast path rejects, by the schema's rules;
- `check`: checking a value before it is sent (`check_outgoing`);
- `codec`: `Codec`, one type's decoder/encoder (fast path, then the fallback);
- `messages`: JSON-RPC envelopes, per-method messages, method tables and `MessageCodec`.
- `surface`: `Surface` (a surface module's generated `SURFACE`), `surface_of`, `tag_of`.

Private: import the public names from `acp_schema` itself.
"""
