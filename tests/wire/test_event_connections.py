"""The Streamable HTTP client's transport: each event stream (GET) on a connection of its own,
closed with its response; POSTs and DELETEs on one shared connection (the httpcore HTTP/2
workaround in acpwire/streams/event_connections.py)."""

from __future__ import annotations

import httpx

from acpwire.streams.event_connections import EventStreamConnections


class Counted(httpx.AsyncBaseTransport):
    def __init__(self, made: list[Counted]) -> None:
        made.append(self)
        self.requests: list[str] = []
        self.closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request.method)
        return httpx.Response(200, stream=httpx.ByteStream(b"data: {}\n\n"))

    async def aclose(self) -> None:
        self.closed = True


async def test_each_get_has_its_own_transport_closed_with_its_response() -> None:
    made: list[Counted] = []
    async with httpx.AsyncClient(transport=EventStreamConnections(lambda: Counted(made))) as client:
        await client.post("http://agent/acp", content=b"{}")
        async with client.stream("GET", "http://agent/acp") as first:
            async with client.stream("GET", "http://agent/acp"):
                assert [t.closed for t in made] == [False, False, False]
            assert made[2].closed and not made[1].closed
            assert await first.aread() == b"data: {}\n\n"
        await client.delete("http://agent/acp")
        assert [t.requests for t in made] == [["POST", "DELETE"], ["GET"], ["GET"]]
        assert [t.closed for t in made] == [False, True, True]
    assert made[0].closed


async def test_a_get_that_fails_closes_its_transport() -> None:
    made: list[Counted] = []

    class Failing(Counted):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            raise httpx.ConnectError("refused")

    transport = EventStreamConnections(lambda: Failing(made))
    async with httpx.AsyncClient(transport=transport) as client:
        try:
            await client.get("http://agent/acp")
        except httpx.ConnectError:
            pass
        else:
            raise AssertionError("the GET should have failed")
        assert made[1].closed
