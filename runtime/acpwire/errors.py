"""Typed exceptions: JSON-RPC errors (code, message, data) and connection failures."""

from __future__ import annotations

from typing import Any

from acp_schema.v2 import ErrorCodeValues as Codes


class RpcError(Exception):
    """A JSON-RPC error: raised by handlers to answer with it, raised to callers who got it."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def parse_error(cls, detail: str) -> RpcError:
        return cls(Codes.PARSE_ERROR, f"Parse error: {detail}")

    @classmethod
    def invalid_request(cls, detail: str) -> RpcError:
        return cls(Codes.INVALID_REQUEST, f"Invalid request: {detail}")

    @classmethod
    def method_not_found(cls, method: str) -> RpcError:
        return cls(Codes.METHOD_NOT_FOUND, "Method not found", {"method": method})

    @classmethod
    def invalid_params(cls, detail: str) -> RpcError:
        return cls(Codes.INVALID_PARAMS, f"Invalid params: {detail}")

    @classmethod
    def internal_error(cls, detail: str) -> RpcError:
        return cls(Codes.INTERNAL_ERROR, f"Internal error: {detail}")

    @classmethod
    def request_cancelled(cls) -> RpcError:
        return cls(Codes.REQUEST_CANCELLED, "Request cancelled")

    @classmethod
    def auth_required(cls) -> RpcError:
        return cls(Codes.AUTHENTICATION_REQUIRED, "Authentication required")

    @classmethod
    def resource_not_found(cls, what: str) -> RpcError:
        return cls(Codes.RESOURCE_NOT_FOUND, f"Resource not found: {what}")

    @classmethod
    def unsupported_protocol_version(cls, requested: int, supported: list[int]) -> RpcError:
        return cls(
            Codes.UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"requested": requested, "supported": supported},
        )


class ConnectionClosed(Exception):
    """The peer went away; requests still waiting for an answer fail with this."""


class PeerExited(ConnectionClosed):
    """The agent subprocess exited; carries its exit code and the tail of its stderr."""

    def __init__(self, exit_code: int | None, stderr_tail: str) -> None:
        tail = f"; stderr tail:\n{stderr_tail}" if stderr_tail else ""
        super().__init__(f"agent exited with code {exit_code}{tail}")
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail


class ProtocolMismatch(Exception):
    """The peer answered `initialize` with a protocol version this side does not speak."""
