"""What one connection may cost the web process: its TLS read buffer, and how long it may sit
without asking anything.

Measured under the unit's limits (``benchmarks/web_attacks.py``, docs/web.md "Measured"): 256
event streams and then 900 idle TLS connections took the process from 56 to 356 MB resident,
against the unit's ``MemoryMax=384M``, and the idle connections were never let go. Two causes:

* asyncio (Python 3.11 and later) gives every TLS connection a 256 KiB read buffer
  (``asyncio.sslproto.SSLProtocol.max_size``), a zero-filled ``bytearray`` and so resident at
  once, handshake or not. A TLS record is at most 16 KiB, and this process reads small
  requests and at most one upload at a time: 16 KiB per read costs nothing it needs.
* uvicorn starts its keep-alive timer only after a response, so a connection that never sends
  a request stays open for ever. :class:`FirstRequestDeadline` starts that timer when the
  connection is made: a connection gets as long for its first request as a kept-alive one
  gets for its next (uvicorn's ``timeout_keep_alive``, 5 s). A request begun and never
  finished is not covered (uvicorn has no header timeout); the file limit still bounds those.
"""

from __future__ import annotations

import asyncio
from asyncio import sslproto

from uvicorn.protocols.http.h11_impl import H11Protocol

TLS_READ_BUFFER = 16 * 1024
"""Bytes asyncio reads from a TLS connection at a time: one TLS record at most."""


def bound_tls_buffers() -> None:
    """Every TLS connection of this process reads into :data:`TLS_READ_BUFFER` bytes, not
    256 KiB. Set once, at start, before the server accepts anything."""
    if hasattr(sslproto.SSLProtocol, "max_size"):
        sslproto.SSLProtocol.max_size = TLS_READ_BUFFER


class FirstRequestDeadline(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, whose keep-alive deadline also runs from the connection's
    start: silent for ``timeout_keep_alive`` seconds, it is closed."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive,
                                                            self.timeout_keep_alive_handler)
