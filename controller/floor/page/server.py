"""Running ``tablectl floor web``: the web's listen rules, then uvicorn.

Where it listens, TLS and the accounts are a ``[web]`` file read by the web's own loader
(:func:`controller.web.config.load_web_config`: 127.0.0.1 by default; any other address needs
TLS and accounts, or it refuses to start), so the floor page follows exactly the rules of
``tablectl web``. The floor database is the floor consumer's (``[floor] database``), opened
read-only: this process never writes it. The address used is printed once, as ``listening on
URL`` (port 0 picks a free one, for tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from controller.floor.page.app import FloorPage
from controller.floor.page.console import ConsoleLink
from controller.floor.page.reader import FloorReader
from controller.floor.page.shift import DEFAULT_SHIFTS, Shifts
from controller.web.auth import Authenticator, load_accounts
from controller.web.config import WebConfig, load_web_config
from controller.web.server import serve_asgi


@dataclass(frozen=True, slots=True)
class FloorWebSettings:
    web: WebConfig
    database: str
    shifts: Shifts
    console: ConsoleLink | None = None


def build_app(settings: FloorWebSettings) -> FloorPage:
    accounts = load_accounts(settings.web.accounts) if settings.web.accounts else {}
    reader = FloorReader(settings.database, settings.shifts)
    return FloorPage(reader=reader, auth=Authenticator(accounts),
                     local_role=None if settings.web.accounts else settings.web.local_role,
                     tls=settings.web.tls, console=settings.console)


def serve(settings: FloorWebSettings) -> int:
    app = build_app(settings)
    return serve_asgi(app.asgi, settings.web, name="tablectl floor web",
                      serving=f"floor database {settings.database.split('@')[-1]}",
                      on_bind_error=app.reader.close)


DEFAULT_LOCAL_ROLE = "supervisor"
"""Without accounts and without a ``[web]`` file, the loopback viewer is a supervisor: the
floor page is for the pit, and a dealer's role does not see it."""


def run_floor_web(database: str, *, web_config: Path | None, listen: str | None = None,
                  port: int | None = None, accounts: Path | None = None,
                  local_role: str | None = None, shifts: str | None = None,
                  console_url: str | None = None) -> int:
    """``tablectl floor web``: the settings checked (one line naming a bad one), then serve."""
    if local_role is None and web_config is None:
        local_role = DEFAULT_LOCAL_ROLE
    web = load_web_config(web_config, listen=listen, port=port, accounts=accounts,
                          local_role=local_role)
    return serve(FloorWebSettings(
        web=web, database=database, shifts=Shifts.parse(shifts or DEFAULT_SHIFTS),
        console=ConsoleLink.parse(console_url) if console_url else None))
