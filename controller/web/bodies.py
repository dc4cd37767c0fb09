"""Reading request bodies with a bound, answering with the JSON error shape, and streaming a
blocking iterator: the small pieces every route that takes a body or sends a file shares.

Nothing is read past its limit: a body is refused as soon as it passes it, so a client that
offers 100 MB costs at most the limit (an earlier upload route kept whatever came, then
checked).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import JSONResponse

FORM_BYTES = 4096
"""A login or logout form."""


def error(status: int, code: str, message: str) -> JSONResponse:
    """``{"ok": false, "error": {"code", "message"}}`` (docs/web.md, "Commands")."""
    return JSONResponse({"ok": False, "error": {"code": code, "message": message}},
                        status_code=status)


def declared_too_large(request: Request, limit: int) -> bool:
    """The request's Content-Length says more than ``limit`` (or is not a number): refuse it
    before reading a byte."""
    declared = request.headers.get("content-length")
    return declared is not None and (not declared.isdigit() or int(declared) > limit)


async def read_bounded(request: Request, limit: int) -> bytes | None:
    """The body, or ``None`` as soon as it passes ``limit`` (a body without Content-Length is
    read chunk by chunk and never kept past the limit)."""
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:
            return None
    return bytes(data)


async def small_form(request: Request) -> dict[str, str]:
    """A urlencoded form of at most :data:`FORM_BYTES`: read no further than that."""
    data = await read_bounded(request, FORM_BYTES)
    text = (data or b"").decode("utf-8", "replace")
    return {k: v[0] for k, v in parse_qs(text).items()}


async def in_threads(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    """Each chunk of a streamed export made in a worker thread (the index and the journal files
    block); an error stops the stream, so the client is left with a file that is not JSON."""
    done = object()
    while True:
        chunk = await asyncio.to_thread(next, chunks, done)
        if chunk is done:
            return
        yield chunk  # type: ignore[misc]
