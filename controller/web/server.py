"""Running the web process: bind, serve with uvicorn (TLS when configured), stop on SIGTERM.

The listening socket is bound here, before uvicorn starts, so the address actually used (port 0
picks a free one, for tests) is printed once, as ``listening on URL``, for whoever started us.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from typing import Any

import uvicorn

from controller.journal.keys import load_hmac_key
from controller.journal.errors import JournalError
from controller.web.app import WebApp
from controller.web.auth import Authenticator, load_accounts
from controller.web.config import WebConfig
from controller.web.connections import FirstRequestDeadline, bound_tls_buffers
from controller.web.errors import WebConfigError


def build_app(config: WebConfig) -> WebApp:
    """The application for ``config``; the HMAC key is optional (no key: "HMAC not checked")."""
    key = None
    if config.hmac_key_file is not None:
        try:
            key = load_hmac_key(config.hmac_key_file)
        except (OSError, JournalError) as error:
            raise WebConfigError(f"web.hmac_key_file {config.hmac_key_file}: {error}") from error
    accounts = load_accounts(config.accounts) if config.accounts else {}
    return WebApp(journal_dir=config.journal, index_path=config.index_path(),
                  socket_path=config.socket, key=key, auth=Authenticator(accounts),
                  local_role=None if config.accounts else config.local_role, tls=config.tls,
                  zone=config.local_zone(), video=config.video_url,
                  supervisor_idle=float(config.supervisor_idle_seconds), chips=config.chips,
                  badge_reader=config.badge_reader, badge_needs_pin=config.badge_needs_pin)


def serve(config: WebConfig) -> int:
    app = build_app(config)
    return serve_asgi(app.asgi, config, name="tablectl web",
                      serving=f"journal {config.journal}, table {config.socket}")


def serve_asgi(asgi: Any, config: WebConfig, *, name: str, serving: str,
               on_bind_error: Callable[[], None] | None = None) -> int:
    """Bind ``config``'s address, say it once, and serve ``asgi`` with uvicorn until SIGTERM:
    the one way a page of ours listens (``tablectl web`` and ``tablectl floor web``), with the
    first-request deadline and the bounded TLS buffers. ``on_bind_error`` releases what the
    caller opened when the address cannot be bound."""
    family = socket.AF_INET6 if ":" in config.listen else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((config.listen, config.port))
    except OSError as error:
        sock.close()
        if on_bind_error is not None:
            on_bind_error()
        raise WebConfigError(f"web.listen {config.listen}:{config.port}: "
                             f"{error.strerror or error}") from error
    sock.listen(128)
    port = sock.getsockname()[1]
    scheme = "https" if config.tls else "http"
    print(f"{name}: listening on {scheme}://{config.listen}:{port}/ ({serving})",
          file=sys.stderr, flush=True)
    bound_tls_buffers()
    server = uvicorn.Server(uvicorn.Config(
        asgi, http=FirstRequestDeadline, log_config=None, access_log=False,
        lifespan="on", proxy_headers=False,
        server_header=False, timeout_graceful_shutdown=2,
        ssl_certfile=str(config.tls_cert) if config.tls_cert else None,
        ssl_keyfile=str(config.tls_key) if config.tls_key else None))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0
