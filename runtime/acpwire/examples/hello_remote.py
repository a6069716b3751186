"""The hello agent served over the network (WebSocket and Streamable HTTP on one endpoint):

    python -m acpwire.examples.hello_remote             # http://127.0.0.1:8000/acp, on trio
    hypercorn acpwire.examples.hello_remote:app         # the same app under Hypercorn's CLI

Each ACP connection gets its own HelloAgent.
"""

import sys

import trio

from acpwire import agent_app, serve_remote
from acpwire.examples.hello_agent import HelloAgent

app = agent_app(HelloAgent)

if __name__ == "__main__":
    bind = sys.argv[sys.argv.index("--bind") + 1] if "--bind" in sys.argv else "127.0.0.1:8000"
    trio.run(lambda: serve_remote(app, bind=bind))
