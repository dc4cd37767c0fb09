"""The web process's bounds against the real thing: ``tablectl web`` under uvicorn (the
conftest's processes), spoken to over TCP the way a hostile client would: a chunked upload
that never ends, a Content-Length with no body behind it, and one login opening page after page
of event streams.
"""

from __future__ import annotations

import contextlib
import select
import socket
from urllib.parse import urlsplit

import httpx2 as httpx

from controller.web.app import MAX_UPLOAD
from controller.web.live import MAX_PER_SESSION
from tests.web.conftest import PASSWORDS, Web

ANSWER_SECONDS = 30.0
MB = 1024 * 1024


def _login(web: Web, name: str) -> httpx.Client:
    client = httpx.Client(base_url=web.url, timeout=ANSWER_SECONDS,
                          headers={"origin": web.url})
    answer = client.post("/login", data={"name": name, "password": PASSWORDS[name]})
    assert answer.status_code == 303, answer.text
    return client


def _raw(web: Web, client: httpx.Client, head: str) -> socket.socket:
    """A connection that has sent ``head`` (request line and headers) with the session."""
    parts = urlsplit(web.url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=ANSWER_SECONDS)
    cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
    sock.sendall((head + f"Host: {parts.netloc}\r\nOrigin: {web.url}\r\n"
                  f"Cookie: {cookie}\r\n\r\n").encode())
    return sock


def _status(sock: socket.socket) -> int:
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return int(data.split(b" ", 2)[1])


def test_a_chunked_upload_is_cut_off_at_the_limit(web: Web) -> None:
    """A body without Content-Length is read only up to the limit: the 413 comes while the
    client still has most of its 100 MB to send (it was never buffered whole)."""
    client = _login(web, "surv1")
    sock = _raw(web, client, "POST /console/verify HTTP/1.1\r\nTransfer-Encoding: chunked\r\n")
    chunk = b"%x\r\n" % MB + b" " * MB + b"\r\n"
    sent = 0
    with contextlib.closing(sock), contextlib.closing(client):
        while sent < 100:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += 1
        assert _status(sock) == 413
    assert sent < 100 and sent <= MAX_UPLOAD // MB + 16


def test_a_declared_length_is_refused_before_the_body(web: Web) -> None:
    """Content-Length 100 MB and no body: the answer (413) comes at once, without waiting for
    a byte of it."""
    client = _login(web, "surv1")
    sock = _raw(web, client, f"POST /console/verify HTTP/1.1\r\nContent-Length: {100 * MB}\r\n")
    with contextlib.closing(sock), contextlib.closing(client):
        assert _status(sock) == 413


def test_one_login_cannot_take_every_stream(web: Web) -> None:
    """One dealer login opening stream after stream is turned away (429) after its share;
    surveillance, logged in elsewhere, still gets its stream."""
    dealer, watcher = _login(web, "dealer1"), _login(web, "surv1")
    with contextlib.closing(dealer), contextlib.closing(watcher), \
            contextlib.ExitStack() as streams:
        statuses = []
        for _ in range(MAX_PER_SESSION + 2):
            answer = streams.enter_context(dealer.stream("GET", "/dealer/events"))
            statuses.append(answer.status_code)
        assert statuses == [200] * MAX_PER_SESSION + [429, 429]
        other = streams.enter_context(watcher.stream("GET", "/dealer/events"))
        assert other.status_code == 200


def test_a_connection_that_asks_nothing_is_let_go(web: Web) -> None:
    """A connection that never sends a request is closed by the server after uvicorn's
    keep-alive time (5 s), as a kept-alive one is; 900 of them used to be held for ever, each
    with its TLS buffers (``controller/web/connections.py``)."""
    parts = urlsplit(web.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=ANSWER_SECONDS) as sock:
        readable, _, _ = select.select([sock], [], [], 4 * ANSWER_SECONDS)
        assert readable, "the server still holds a connection that asked nothing"
        assert sock.recv(1) == b""
