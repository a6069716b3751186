"""Resumable streams end to end (`RemoteOptions(resumable=...)`, `open_remote(...,
resume=True)`): the network drops mid-turn (a relay cuts every TCP connection, no close
frame, no DELETE), the client reconnects by itself and reads what it missed, and its folded
session state equals the state of a client that never lost the connection; over each
profile, on each loop. When the server no longer knows the connection the client fails
with `ResumeFailed`, and the session layer's fallback (`open_remote` again, `open_session`)
resumes the session whole. Without the option a cut ends the connection as before."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest

from acp_schema import v2
from acpwire import (
    AgentRequests,
    ClientConnection,
    ConnectionClosed,
    MemorySessionStore,
    PeerError,
    RemoteOptions,
    ResumeFailed,
    ResumeOptions,
    open_remote,
    open_session,
    prompt,
)
from acpwire.agent import AgentApp
from acpwire.client import SessionState
from acpwire.streams import Reconnect
from helpers.asgi_servers import CookieAffinity, hypercorn_serving
from helpers.durable import CWD, Story, connected_turn, described, initialized, reopened, story_app
from helpers.relay import Relay, relay
from helpers.remote import served

pytestmark = pytest.mark.usefixtures("loop")

TRANSPORTS = ["websocket", "http"]
PATIENT = Reconnect(attempts=40, first_delay=0.02, max_delay=0.1)
"""Attempts enough to outlast the cuts of these tests."""


def resumable_app(story: Story, **options: object) -> AgentApp:
    remote = RemoteOptions(resumable=ResumeOptions(), **options)  # type: ignore[arg-type]
    return story_app(story, MemorySessionStore(), remote=remote)


async def reference_state(
    url: str, transport: str, requests: AgentRequests, story: Story
) -> SessionState:
    """The state of one turn by a client that never loses its connection."""
    assert story.gate is not None
    story.gate.set()
    async with open_remote(url, v2=requests.v2_client, transport=transport) as conn:  # type: ignore[arg-type]
        await initialized(conn)
        _, live = await connected_turn(conn, requests)
    return live


async def turn_cut_midway(
    conn: ClientConnection,
    requests: AgentRequests,
    story: Story,
    midway: Callable[[], Awaitable[None]],
    sessions: list[str] | None = None,
) -> tuple[str, SessionState]:
    """A new session (its id added to `sessions`) and one turn of it; `midway` runs once,
    when the turn's tool call has started (the turn waits at the story's gate until `midway`
    sets it)."""
    await initialized(conn)
    opened = await open_session(conn.v2, cwd=CWD)
    if sessions is not None:
        sessions.append(opened.session_id)
    params = v2.PromptRequest(session_id=opened.session_id, prompt=[v2.TextContent(text="go")])
    ran = False
    async with prompt(conn.v2, requests, params, state=opened.state) as turn:
        async for _ in turn:
            if story.started.is_set() and not ran:
                ran = True
                await midway()
    assert ran, "the turn ended before its tool call started"
    return opened.session_id, turn.state


async def client_turn(
    through: str,
    transport: str,
    requests: AgentRequests,
    story: Story,
    midway: Callable[[], Awaitable[None]],
    *,
    resume: Reconnect = PATIENT,
    sessions: list[str] | None = None,
) -> SessionState:
    """`turn_cut_midway` by a resuming client connected through the relay at `through`."""
    async with open_remote(
        through,
        v2=requests.v2_client,
        transport=transport,
        resume=resume,  # type: ignore[arg-type]
    ) as conn:
        _, state = await turn_cut_midway(conn, requests, story, midway, sessions)
    return state


def cut(cutter: Relay, story: Story, *, down_for: float | None) -> Callable[[], Awaitable[None]]:
    """The network drops, the turn goes on without its client and ends, and the network
    comes back `down_for` seconds later (None: never)."""

    async def midway() -> None:
        cutter.cut()
        assert story.gate is not None
        story.gate.set()
        await story.ended.wait()
        if down_for is not None:
            await anyio.sleep(down_for)
            cutter.heal()

    return midway


def next_turn(story: Story) -> None:
    """Hold the story's next turn at its gate again."""
    story.gate, story.started, story.ended = anyio.Event(), anyio.Event(), anyio.Event()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_turn_cut_midway_is_resumed_as_if_never_cut(transport: str) -> None:
    story = Story(anyio.Event())
    requests = AgentRequests()
    with anyio.fail_after(15):
        async with served(resumable_app(story)) as url:
            live = await reference_state(url, transport, requests, story)
            next_turn(story)
            async with relay(url) as (cutter, through):
                async with open_remote(
                    through,
                    v2=requests.v2_client,
                    transport=transport,
                    resume=PATIENT,  # type: ignore[arg-type]
                ) as conn:
                    midway = cut(cutter, story, down_for=0.05)
                    _, state = await turn_cut_midway(conn, requests, story, midway)
                    # the connection goes on after the cut
                    assert (await open_session(conn.v2, cwd=CWD)).how == "new"
    assert described(state) == described(live)
    assert described(live)["run"] == ("idle", "end_turn")


async def test_a_resuming_websocket_returns_the_servers_cookies() -> None:
    """Cookie affinity over WebSocket: the 101 sets a cookie, and the upgrade that resumes
    the connection after the cut carries it (a balancer sends it to the process holding the
    connection); the turn is resumed whole."""
    story = Story(anyio.Event())
    requests = AgentRequests()
    app = CookieAffinity(resumable_app(story))
    with anyio.fail_after(15):
        async with hypercorn_serving(app) as url:
            live = await reference_state(url, "websocket", requests, story)
            next_turn(story)
            async with relay(url) as (cutter, through):
                state = await client_turn(
                    through, "websocket", requests, story, cut(cutter, story, down_for=0.05)
                )
    assert described(state) == described(live)
    assert app.with_cookie >= 1


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_connection_the_server_forgot_fails_and_the_session_is_resumed(
    transport: str,
) -> None:
    """The cut outlasts the server's `idle_timeout`: the connection is gone, the client's
    resume is answered 404 and it fails with `ResumeFailed`; `open_remote` again and
    `open_session` resume the session with everything the turn did."""
    story = Story(anyio.Event())
    requests = AgentRequests()
    sessions: list[str] = []
    with anyio.fail_after(15):
        async with served(resumable_app(story, idle_timeout=0.5)) as url:
            live = await reference_state(url, transport, requests, story)
            next_turn(story)
            async with relay(url) as (cutter, through):
                midway = cut(cutter, story, down_for=1.5)  # past idle_timeout: reaped
                with pytest.raises(ResumeFailed) as failed:
                    await client_turn(
                        through, transport, requests, story, midway, sessions=sessions
                    )
            assert failed.value.url == through
            assert failed.value.status == 404
            assert "open_session" in str(failed.value)
            [session_id] = sessions
            async with open_remote(url, v2=requests.v2_client, transport=transport) as conn:  # type: ignore[arg-type]
                await initialized(conn)
                assert described(await reopened(conn, session_id)) == described(live)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_cursor_the_server_no_longer_keeps_fails_with_409(transport: str) -> None:
    """What the server sends is lost on the way while the turn ends (its writes succeed, so
    it counts them read and keeps only the newest), then the network drops: the client's
    cursor is older than what is kept, its resume is answered 409, it fails with
    `ResumeFailed`, and the session is resumed whole on a new connection."""
    story = Story(anyio.Event())
    requests = AgentRequests()
    sessions: list[str] = []
    app = story_app(
        story,
        MemorySessionStore(),
        remote=RemoteOptions(resumable=ResumeOptions(max_events=1, max_bytes=1)),
    )
    with anyio.fail_after(15):
        async with served(app) as url:
            live = await reference_state(url, transport, requests, story)
            next_turn(story)
            async with relay(url) as (cutter, through):

                async def lost_then_cut() -> None:
                    cutter.drop()
                    assert story.gate is not None
                    story.gate.set()
                    await story.ended.wait()
                    await anyio.sleep(0.2)  # the server wrote the turn's end
                    cutter.cut()
                    cutter.heal()

                with pytest.raises(ResumeFailed) as failed:
                    await client_turn(
                        through, transport, requests, story, lost_then_cut, sessions=sessions
                    )
            assert failed.value.status == 409
            async with open_remote(url, v2=requests.v2_client, transport=transport) as conn:  # type: ignore[arg-type]
                await initialized(conn)
                assert described(await reopened(conn, sessions[0])) == described(live)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_client_that_gives_up_names_the_url(transport: str) -> None:
    story = Story(anyio.Event())
    requests = AgentRequests()
    quick = Reconnect(attempts=3, first_delay=0.01, max_delay=0.02)
    with anyio.fail_after(15):
        async with served(resumable_app(story)) as url:
            async with relay(url) as (cutter, through):
                midway = cut(cutter, story, down_for=None)
                with pytest.raises(ResumeFailed) as failed:
                    await client_turn(through, transport, requests, story, midway, resume=quick)
    assert failed.value.url == through
    assert "attempt" in failed.value.what


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_without_the_option_a_cut_ends_the_connection(transport: str) -> None:
    """A server without `resumable`: the client asked for resumption but the server does not
    offer it, so a cut ends the connection (not `ResumeFailed`: nothing was tried)."""
    story = Story(anyio.Event())
    requests = AgentRequests()
    with anyio.fail_after(15):
        async with served(story_app(story, MemorySessionStore())) as url:
            async with relay(url) as (cutter, through):
                midway = cut(cutter, story, down_for=0.0)
                with pytest.raises(ConnectionClosed) as failed:
                    await client_turn(through, transport, requests, story, midway)
    assert not isinstance(failed.value, ResumeFailed)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_request_sent_while_the_network_is_down_is_answered_once_back(
    transport: str,
) -> None:
    """The client sends while the network is down (a POST that cannot connect, a frame on a
    lost socket): once it is back the request reaches the agent once (one session made,
    not two) and its answer comes."""
    app = resumable_app(Story(anyio.Event()))
    with anyio.fail_after(15):
        async with served(app) as url, relay(url) as (cutter, through):
            async with open_remote(
                through,
                v2=AgentRequests().v2_client,
                transport=transport,
                resume=PATIENT,  # type: ignore[arg-type]
            ) as conn:
                await initialized(conn)
                cutter.cut()

                async def heal_soon() -> None:
                    await anyio.sleep(0.3)
                    cutter.heal()

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(heal_soon)
                    made = await conn.v2.peer.session_new(v2.NewSessionRequest(cwd=CWD))
                listed = await conn.v2.peer.session_list(v2.ListSessionsRequest())
    assert [session.session_id for session in listed.sessions] == [made.session_id]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_session_limit_holds_on_resumable_connections(transport: str) -> None:
    """The server's own answers (here: a session past the limit) go where the agent's would,
    counted among the stream's messages (a resumable WebSocket numbers every frame)."""
    app = resumable_app(Story(anyio.Event()), max_sessions_per_connection=1)
    with anyio.fail_after(15):
        async with served(app) as url:
            async with open_remote(
                url, v2=AgentRequests().v2_client, transport=transport, resume=PATIENT
            ) as conn:  # type: ignore[arg-type]
                await initialized(conn)
                await open_session(conn.v2, cwd=CWD)
                with pytest.raises(PeerError) as refused:
                    await open_session(conn.v2, cwd=CWD)
                assert refused.value.data == {"limit": 1}
                listed = await conn.v2.peer.session_list(v2.ListSessionsRequest())
                assert len(listed.sessions) == 1
