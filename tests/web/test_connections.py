"""What one connection may cost the web process (``controller/web/connections.py``): a TLS
connection's read buffer is one TLS record, not asyncio's 256 KiB, which 900 idle connections
held resident (docs/web.md, "Measured")."""

from __future__ import annotations

import asyncio
import ssl
from asyncio import sslproto
from collections.abc import Iterator

import pytest

from controller.web.connections import TLS_READ_BUFFER, bound_tls_buffers


@pytest.fixture(name="restored")
def restored_fixture() -> Iterator[None]:
    """The class attribute is the process's; the test process gets its own back."""
    before = sslproto.SSLProtocol.max_size
    yield
    sslproto.SSLProtocol.max_size = before


@pytest.mark.usefixtures("restored")
def test_a_tls_connection_reads_into_one_record_not_256_kib() -> None:
    """A server-side TLS protocol made after :func:`bound_tls_buffers` holds 16 KiB for its
    reads; before, asyncio's default 256 KiB (zero-filled, so resident at once)."""
    loop = asyncio.new_event_loop()
    try:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)

        def buffer_size() -> int:
            made = sslproto.SSLProtocol(loop, asyncio.Protocol(), context, None,
                                        server_side=True)
            return len(made._ssl_buffer)  # noqa: SLF001 (the buffer is the point)

        assert buffer_size() == 256 * 1024
        bound_tls_buffers()
        assert buffer_size() == TLS_READ_BUFFER == 16 * 1024
    finally:
        loop.close()
