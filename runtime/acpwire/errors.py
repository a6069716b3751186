"""Every public exception of acpwire: JSON-RPC errors (code, message, data), connection
failures, negotiation and launch errors."""

from __future__ import annotations

from typing import Any

from acp_schema.v2 import ErrorCodeValues as Codes


class RpcError(Exception):
    """A JSON-RPC error: raised by handlers to answer with it, raised to callers who got it."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        """The JSON-RPC error code (ACP's are in `acp_schema.v2.ErrorCodeValues`)."""
        self.message = message
        """The error message."""
        self.data = data
        """Optional details (any JSON value); None sends no `data`."""

    def to_wire(self) -> dict[str, Any]:
        """The JSON-RPC `error` object: `{"code", "message"[, "data"]}`."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def parse_error(cls, detail: str) -> RpcError:
        """-32700: the line is not JSON."""
        return cls(Codes.PARSE_ERROR, f"Parse error: {detail}")

    @classmethod
    def invalid_request(cls, detail: str) -> RpcError:
        """-32600: not a valid request (or not one allowed now)."""
        return cls(Codes.INVALID_REQUEST, f"Invalid request: {detail}")

    @classmethod
    def method_not_found(cls, method: str) -> RpcError:
        """-32601 with `data: {"method": method}`."""
        return cls(Codes.METHOD_NOT_FOUND, "Method not found", {"method": method})

    @classmethod
    def invalid_params(cls, detail: str) -> RpcError:
        """-32602: the params do not fit the method (`detail` says where)."""
        return cls(Codes.INVALID_PARAMS, f"Invalid params: {detail}")

    @classmethod
    def internal_error(cls, detail: str, data: Any = None) -> RpcError:
        """-32603: the handler failed."""
        return cls(Codes.INTERNAL_ERROR, f"Internal error: {detail}", data)

    @classmethod
    def input_ended(cls, grace_period: float) -> RpcError:
        """The answer to a request still running `grace_period` seconds after the input ended."""
        return cls.internal_error(
            f"the input ended and the request did not finish within {grace_period:g} s"
        )

    @classmethod
    def request_cancelled(cls) -> RpcError:
        """`REQUEST_CANCELLED` (-32800): the request was cancelled (`$/cancel_request`, `session/cancel`)."""
        return cls(Codes.REQUEST_CANCELLED, "Request cancelled")

    @classmethod
    def auth_required(cls) -> RpcError:
        """`AUTHENTICATION_REQUIRED`: the client must authenticate first."""
        return cls(Codes.AUTHENTICATION_REQUIRED, "Authentication required")

    @classmethod
    def resource_not_found(cls, what: str) -> RpcError:
        """`RESOURCE_NOT_FOUND`: e.g. an unknown session id or file."""
        return cls(Codes.RESOURCE_NOT_FOUND, f"Resource not found: {what}")

    @classmethod
    def unsupported_protocol_version(cls, requested: int, supported: list[int]) -> RpcError:
        """The `initialize` error when no protocol version is shared (`data` lists them)."""
        return cls(
            Codes.UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"requested": requested, "supported": supported},
        )


DATA_TEXT_LIMIT = 500
"""The most characters of an error's `data` shown in a `PeerError`'s text."""


def data_text(data: Any) -> str | None:
    """What an error's `data` says in words: a string, or an object's `message` string
    (stripped, cut at `DATA_TEXT_LIMIT` characters); None when it says nothing so."""
    if isinstance(data, dict):
        data = data.get("message")
    if not isinstance(data, str) or not data.strip():
        return None
    text = data.strip()
    if len(text) > DATA_TEXT_LIMIT:
        text = f"{text[:DATA_TEXT_LIMIT]}... ({len(text) - DATA_TEXT_LIMIT} more characters)"
    return text


class PeerError(RpcError):
    """The error the peer answered one of our requests (`method`) with.

    Its text is `method: message (code)`, followed by what `data` says when it is a string or
    an object with a `message` string: agents often put the useful part there
    (`authenticate: Internal error (-32603): OPENAI_API_KEY is not set`). `data` itself is
    kept whole.

    Still an `RpcError` for those who catch that; a handler it escapes from answers its own
    request with -32603 and this error in `data` (`nested_failure`), not with it verbatim:
    the peer's "Method not found" for a permission request is not the prompt's error. To
    forward it on purpose, raise `RpcError(e.code, e.message, e.data)`.
    """

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(code, message, data)
        detail = data_text(data)
        shown = f": {detail}" if detail is not None and detail != message else ""
        self.args = (f"{method}: {message} ({code}){shown}",)
        """The exception's text: `method: message (code)`, then `data`'s text if it has one."""
        self.method = method
        """The method of our request the peer answered with this error."""

    def nested_failure(self) -> RpcError:
        """The -32603 answer to the request whose handler this error escaped from."""
        return RpcError.internal_error(
            f"{self.method} failed: {self.message} ({self.code})",
            {"method": self.method, "error": self.to_wire()},
        )


class InvalidResponse(Exception):
    """The peer answered our request (`method`) with a result that does not fit its type, or
    with a line over the connection's `max_line_bytes` (dropped unread).

    `reason` is the decoder's message (with the JSON path). Not an `RpcError`: nothing on the
    wire said -32602; the peer has a bug (its log should name it).
    """

    def __init__(self, method: str, reason: str) -> None:
        super().__init__(f"invalid response to {method}: {reason}")
        self.method = method
        """The method of our request."""
        self.reason = reason
        """What does not fit, with the JSON path."""


class ConnectionClosed(Exception):
    """The peer went away; requests still waiting for an answer fail with this."""


class PeerExited(ConnectionClosed):
    """The agent subprocess exited; carries its exit code and the tail of its stderr."""

    def __init__(self, exit_code: int | None, stderr_tail: str) -> None:
        tail = f"; stderr tail:\n{stderr_tail}" if stderr_tail else ""
        super().__init__(f"agent exited with code {exit_code}{tail}")
        self.exit_code = exit_code
        """The agent's exit code (negative: the signal that ended it; None: unknown)."""
        self.stderr_tail = stderr_tail
        """The agent's last stderr lines."""


class RemoteConnectionError(ConnectionClosed):
    """A remote agent (`open_remote`) could not be reached, refused the connection, or the
    connection to it was lost; the message names the URL and what happened."""

    def __init__(self, url: str, what: str, *, status: int | None = None) -> None:
        super().__init__(f"the agent at {url}: {what}")
        self.url = url
        """The agent's endpoint."""
        self.what = what
        """What happened (the HTTP status and the server's words, a network error, a close
        code)."""
        self.status = status
        """The HTTP status the server answered with, when that was the trouble."""


class ResumeFailed(RemoteConnectionError):
    """A remote connection opened with `open_remote(..., resume=True)` was cut and could not
    be resumed: the server no longer keeps what the client missed (409), no longer knows the
    connection (404), or did not answer within the reconnect attempts. Fall back to the
    session layer: `open_remote` again, then `open_session(conn, session_id=...)` resumes
    the session from the agent's store (`session/resume` / `session/load`)."""


class ProtocolMismatch(Exception):
    """The peer answered `initialize` with a protocol version this side does not speak."""


class NotInitialized(RuntimeError):
    """The agent was used before `initialize` was answered."""


class InitializeTimeout(TimeoutError):
    """The agent did not answer `initialize` in time."""


class AgentLaunchError(OSError):
    """The agent command could not be started; the message says why and what to do."""


class AgentNotFound(AgentLaunchError, FileNotFoundError):
    """The agent command (or the interpreter on its `#!` line) does not exist."""


class AgentNotExecutable(AgentLaunchError, PermissionError):
    """The agent command exists but may not be executed."""
