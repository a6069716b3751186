"""The remote client's TLS context (acpwire/streams/remote_http.py): the default one, which
loads the CA bundle, is built once per `SSL_CERT_FILE` / `SSL_CERT_DIR` and shared by every
connection; a context the user passes is used as it is."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest
import trustme

from acpwire.streams import remote_http
from acpwire.streams.remote_http import http_client, tls_context

URL = "http://agent/acp"


def test_the_default_context_is_built_once() -> None:
    assert tls_context(True) is tls_context(True)


def test_a_users_context_is_used_as_is_and_false_verifies_nothing() -> None:
    own = ssl.create_default_context()
    assert tls_context(own) is own
    assert tls_context(False).verify_mode == ssl.CERT_NONE
    assert tls_context(False) is not tls_context(False)


def test_another_ca_bundle_gets_a_context_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    default = tls_context(True)
    bundle = tmp_path / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    assert tls_context(True) is not default
    assert tls_context(True) is tls_context(True)


async def test_clients_build_the_default_context_once(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[object] = []

    def counted(**kwargs: object) -> ssl.SSLContext:
        built.append(kwargs)
        return ssl.create_default_context()

    monkeypatch.setattr(remote_http, "_DEFAULT_CONTEXTS", {})
    monkeypatch.setattr(httpx, "create_ssl_context", counted)
    for apart in (True, False, True):
        async with http_client(
            URL, headers=None, http2=True, verify=True, event_streams_apart=apart
        ):
            pass
    assert len(built) == 1
