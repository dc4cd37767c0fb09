"""The floor page's Starlette application, with the web's own gate.

Logging in and out, sessions, the kiosk's loopback-only local session, the origin and CSRF
checks are :class:`controller.web.gate.Gate`, which this app holds as the console does, and
the security headers :class:`~controller.web.app.SecurityHeaders`: one gate for every page of
tablectl, composed, not inherited (this app has no journal and no table socket, and no longer
inherits the web app that has them). Who may see the floor is who may see the console
(``Role.sees_console``: supervisors and surveillance); a dealer is refused.

Every page reads the floor's database in a worker thread (:mod:`.reader`); the page's script
(``static/floor.js``, the only script, CSP ``script-src 'self'``) fetches the tiles every
:data:`TILES_EVERY_S` and the figures every :data:`FIGURES_EVERY_S` as HTML that this app
renders with Jinja2's autoescaping, so a table id or a clause text cannot become markup.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from controller.floor.page.chart import rounds_chart, win_chart
from controller.floor.page.console import ConsoleLink
from controller.floor.page.figures import hold_percent, tile_json
from controller.floor.page.reader import FloorReader
from controller.roles import Role
from controller.web import app as web_app
from controller.web.app import WORKERS, SecurityHeaders, money
from controller.web.auth import Authenticator, Session
from controller.web.gate import Gate
from controller.web.presence import SupervisorPresence

HERE = Path(__file__).parent
WEB = Path(web_app.__file__).parent
TILES_EVERY_S = 2
FIGURES_EVERY_S = 30


class FloorPage:
    """The floor page over one floor database; ``asgi`` is what uvicorn serves."""

    def __init__(self, *, reader: FloorReader, auth: Authenticator, local_role: Role | None,
                 tls: bool = False, console: ConsoleLink | None = None) -> None:
        self.reader = reader
        self.console = console
        self.templates = Environment(
            loader=ChoiceLoader([FileSystemLoader(HERE / "templates"),
                                 FileSystemLoader(WEB / "templates")]),
            autoescape=select_autoescape(["html"]))
        self.templates.filters.update(money=money, percent=hold_percent)
        self.templates.globals.update(console_url=self.console_url, win_chart=win_chart,
                                      rounds_chart=rounds_chart, tiles_every=TILES_EVERY_S,
                                      figures_every=FIGURES_EVERY_S)
        self.gate = Gate(auth=auth, local_role=local_role, tls=tls,
                         presence=SupervisorPresence(), templates=self.templates)
        routes = [
            Route("/", self.home), Route("/login", self.gate.login_page, methods=["GET", "POST"]),
            Route("/logout", self.gate.logout, methods=["POST"]),
            Route("/floor", self.floor), Route("/floor/tiles", self.tiles_part),
            Route("/floor/figures", self.figures_part),
            Route("/floor/tiles.json", self.tiles_json),
            Mount("/floor/static", StaticFiles(directory=HERE / "static"), name="floor-static"),
            Mount("/static", StaticFiles(directory=WEB / "static"), name="static"),
        ]
        self.starlette = Starlette(routes=routes, lifespan=self._floor_lifespan)
        self.asgi = SecurityHeaders(self.starlette, tls)

    @asynccontextmanager
    async def _floor_lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="floor-worker"))
        try:
            yield
        finally:
            await asyncio.to_thread(self.reader.close)

    def console_url(self, table: str, site: str) -> str | None:
        return None if self.console is None else self.console.url(table, site)

    async def home(self, request: Request) -> Response:
        viewer = self.gate.viewer(request)
        return RedirectResponse("/floor" if viewer is not None else "/login", status_code=303)

    async def floor(self, request: Request) -> Response:
        viewer = self.gate.guard(request, console=True)
        if not isinstance(viewer, Session):
            return viewer
        snapshot = await asyncio.to_thread(self.reader.snapshot)
        return self.gate.page("floor.html", viewer, snap=snapshot)

    async def tiles_part(self, request: Request) -> Response:
        viewer = self._part_viewer(request)
        if not isinstance(viewer, Session):
            return viewer
        at, tiles = await asyncio.to_thread(self.reader.tiles)
        html = self.templates.get_template("_tiles.html").render(at=at, tiles=tiles)
        return HTMLResponse(html)

    async def figures_part(self, request: Request) -> Response:
        viewer = self._part_viewer(request)
        if not isinstance(viewer, Session):
            return viewer
        snapshot = await asyncio.to_thread(self.reader.snapshot)
        html = self.templates.get_template("_figures.html").render(snap=snapshot)
        return HTMLResponse(html)

    async def tiles_json(self, request: Request) -> Response:
        viewer = self._part_viewer(request)
        if not isinstance(viewer, Session):
            return viewer
        at, tiles = await asyncio.to_thread(self.reader.tiles)
        return JSONResponse({"at": at.isoformat(), "tables": [tile_json(t) for t in tiles]})

    def _part_viewer(self, request: Request) -> Session | Response:
        """A fetch is answered 401/403 in words, not redirected to a login page."""
        viewer = self.gate.viewer(request)
        if viewer is None:
            return JSONResponse({"error": "log in"}, status_code=401)
        if not viewer.role.sees_console:
            return JSONResponse({"error": f"the {viewer.role.value} role does not see the "
                                          "floor"}, status_code=403)
        return viewer
