"""Examples to read and run (each is what the README shows):

- `python -m acpwire.examples.hello_agent`: a small ACP v2 agent over stdio;
- `python -m acpwire.examples.hello_v1_agent`: the same agent in ACP v1;
- `python -m acpwire.examples.hello_client -- <agent command>`: a client that runs one prompt
  turn against any v2 agent, e.g. `... -- python -m acpwire.examples.hello_agent`;
- `python -m acpwire.examples.hello_v1_client -- <agent command>`: the same client in ACP v1
  (the v1 agent above when no command is given);
- `python -m acpwire.examples.schema_tour`: the `acp_schema` bindings alone, decoding and
  encoding lines of both protocol versions.
"""
