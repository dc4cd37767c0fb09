"""The Starlette application: the dealer's screen, the surveillance console, login.

The dealer runs the round from the screen and a supervisor answers a hold there after a PIN:
``POST /dealer/command`` sends one control verb through the socket in the name and role of the
person who gave it (:mod:`.commander`, docs/web.md "Commands"); nothing here writes the journal.
Every state-changing request must come from this app's own origin with the session's CSRF
token (:mod:`.guard`); logins back off per name and per address; sessions, event streams and
uploads are bounded per person, so one login cannot turn the others away. Every page is
rendered by Jinja2 with autoescaping, so journal text (an actor or player called ``<script>``) is text; the pages
load one script file from this app (Content-Security-Policy ``script-src 'self'``, no inline
script, nothing from another host).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from concurrent.futures import ThreadPoolExecutor
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from controller.journal.errors import JournalError
from controller.web.auth import Authenticator, Role, Session
from controller.web.actions import ScreenActions
from controller.web.bodies import declared_too_large, in_threads, read_bounded
from controller.web.commander import TableCommander
from controller.web.damaged import damaged_rounds
from controller.web.errors import ExportError
from controller.web.export import (MAX_EXPORT_RECORDS, export_seqs, plan_export, stream_export,
                                   verify_export)
from controller.web.facedown import withheld_from, withheld_round
from controller.web.gate import Gate
from controller.web.index import JournalIndex
from controller.web.integrity import JournalWatcher
from controller.web.live import Broadcast, StreamLimit, TableFollower
from controller.web.localtime import LocalZone
from controller.web.badge import (BADGE_WAIT_SECONDS, BadgeWaiters, is_loopback_address,
                                  open_badge_reader)
from controller.web.presence import DEFAULT_IDLE_SECONDS, SupervisorPresence
from controller.web.roundscsv import rounds_csv
from controller.web.search import RoundFilter, games, overrides, recall, search_rounds
from controller.web.timeline import hex_fields, iter_seqs, read_listed, read_round
from controller.web.video import VideoLink

HERE = Path(__file__).parent
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"same-origin"), (b"x-frame-options", b"DENY"),
           (b"cache-control", b"no-store")]
MAX_UPLOAD = 32 * 1024 * 1024
"""An export to verify: 50,000 records is about 25 MB (MAX_EXPORT_RECORDS)."""
MAX_UPLOADS = 1
"""Exports verified at once; another waits its turn (503), it is not read meanwhile."""
HEARTBEAT_SECONDS = 15.0
WORKERS = 2
_CARD_RE = re.compile(r"^([2-9TJQKA])([CDHS])$")
_SUITS = {"C": ("\u2663", "black"), "D": ("\u2666", "red"), "H": ("\u2665", "red"),
          "S": ("\u2660", "black")}


def card_html(code: Any) -> Markup:
    """A card drawn as a card; a face-down card (``None``) as its back; anything else as text."""
    if code is None:
        return Markup('<span class="card back" title="face down"></span>')
    match = _CARD_RE.match(str(code))
    if match is None:
        return Markup('<span class="card odd">{}</span>').format(code)
    rank, suit = match.groups()
    symbol, colour = _SUITS[suit]
    return Markup('<span class="card {}" title="{}">{}{}</span>').format(
        colour, code, "10" if rank == "T" else rank, symbol)


def money(value: Any) -> str:
    """Minor units as major.minor (docs/money.md: integers, never floats)."""
    if not isinstance(value, int):
        return "" if value is None else str(value)
    sign = "-" if value < 0 else ""
    return f"{sign}{abs(value) // 100:,}.{abs(value) % 100:02d}"


def _before(entries: Iterable[Any], withheld: int) -> Iterator[Any]:
    """The entries before seq ``withheld`` (they come in seq order)."""
    for entry in entries:
        if entry.seq >= withheld:
            return
        yield entry


class SecurityHeaders:
    """Adds the CSP and friends to every response (pure ASGI: streaming stays streaming)."""

    def __init__(self, app: Callable[..., Awaitable[None]], tls: bool) -> None:
        self.app = app
        self.extra = HEADERS + ([(b"strict-transport-security", b"max-age=31536000")]
                                if tls else [])

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + self.extra
            await send(message)

        await self.app(scope, receive, with_headers)


class WebApp:
    """The pages over one journal and one table; ``asgi`` is what uvicorn serves."""

    def __init__(self, *, journal_dir: Path, index_path: Path, socket_path: Path | None,
                 key: bytes | None, auth: Authenticator, local_role: Role | None,
                 tls: bool = False, poll: float = 1.0, zone: LocalZone | None = None,
                 video: VideoLink | None = None,
                 supervisor_idle: float = DEFAULT_IDLE_SECONDS,
                 chips: tuple[int, ...] | None = None, badge_reader: str | None = None,
                 badge_needs_pin: bool = True, usb_backend: Any = None,
                 badge_wait_seconds: float = BADGE_WAIT_SECONDS) -> None:
        self.index = JournalIndex(journal_dir, index_path, key)
        self.key = key
        self.auth = auth
        self.watcher = JournalWatcher(journal_dir, self.index, key, poll)
        self.broadcast = Broadcast()
        self.follower = TableFollower(socket_path, self.broadcast, **(
            {"chips": chips} if chips else {})) if socket_path else None
        self.presence = SupervisorPresence(supervisor_idle)
        self.badges = BadgeWaiters()
        self.badge_reader = None if badge_reader is None else open_badge_reader(
            badge_reader, self.badges.deliver, backend=usb_backend)
        self.badge_needs_pin = badge_needs_pin
        self.badge_wait_seconds = badge_wait_seconds
        self.actions = ScreenActions(self, TableCommander(socket_path))
        self._uploads = 0
        self.templates = Environment(loader=FileSystemLoader(HERE / "templates"),
                                     autoescape=select_autoescape(["html"]))
        self.templates.filters.update(card=card_html, money=money)
        self.zone = zone if zone is not None else LocalZone.system()
        self.video = video
        self.templates.filters.update(local=self.zone.local)
        self.templates.globals.update(zone_name=self.zone.name, video_url=self.video_url)
        self.gate = Gate(auth=auth, local_role=local_role, tls=tls, presence=self.presence,
                         templates=self.templates)
        routes = [
            Route("/", self.home),
            Route("/login", self.gate.login_page, methods=["GET", "POST"]),
            Route("/logout", self.gate.logout, methods=["POST"]),
            Route("/dealer", self.dealer), Route("/dealer/events", self.dealer_events),
            Route("/dealer/state", self.dealer_state),
            Route("/dealer/command", self.actions.command, methods=["POST"]),
            Route("/dealer/supervisor", self.actions.supervisor_login, methods=["POST"]),
            Route("/dealer/supervisor/badge", self.actions.supervisor_badge,
                  methods=["POST"]),
            Route("/dealer/supervisor/logout", self.actions.supervisor_logout,
                  methods=["POST"]),
            Route("/console", self.console), Route("/console/round/{round_id}", self.round),
            Route("/console/recall", self.recall), Route("/console/overrides", self.overrides),
            Route("/console/export", self.export),
            Route("/console/rounds.csv", self.rounds_csv),
            Route("/console/verify", self.verify_page, methods=["GET", "POST"]),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ]
        self.starlette = Starlette(routes=routes, lifespan=self._lifespan)
        self.asgi = SecurityHeaders(self.starlette, tls)

    @asynccontextmanager
    async def _lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        # Two workers for the queries and files pages wait on: each thread of the default
        # pool (up to 6 here) would grow its own malloc arena, and memory is the Pi's budget.
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="web-worker"))
        self.watcher.start()
        if self.follower is not None:
            self.follower.start()
        if self.badge_reader is not None:
            self.badge_reader.start()
        try:
            yield
        finally:
            if self.badge_reader is not None:
                await asyncio.to_thread(self.badge_reader.close)
            if self.follower is not None:
                await asyncio.to_thread(self.follower.stop)
            await asyncio.to_thread(self.watcher.stop)
            self.index.close()

    # -- helpers --------------------------------------------------------------------------------

    async def _withheld_from(self, viewer: Session) -> int | None:
        """The first journal seq ``viewer`` may not see now (a face-down card before its
        reveal, and all after it: :mod:`controller.web.facedown`), or ``None``."""
        if viewer.role.sees_face_down:
            return None
        return await asyncio.to_thread(withheld_from, self.index, self.key)

    def _catch_up(self) -> None:
        """Index what the journal gained since the last pass, so a search sees the round that
        just ended; skipped while the background thread is building (no page waits for it).
        Errors are the background thread's to report."""
        try:
            self.index.update(wait=False)
        except (OSError, JournalError, sqlite3.Error):
            pass

    def video_url(self, table: str | None, utc_text: str | None) -> str | None:
        """The surveillance video at a round's time (``web.video_url``), or None."""
        return None if self.video is None else self.video.url(table, utc_text)

    def _damaged(self, round_ids: list[str]) -> frozenset[str]:
        report = self.watcher.integrity.report
        problem = None if report is None or report.problem is None else report.problem.seq
        return damaged_rounds(self.index, round_ids, problem)

    def integrity(self) -> dict[str, Any]:
        state = self.index.state()
        found = self.watcher.integrity
        report = found.report
        return {"checked": found.checked_at is not None, "error": found.error,
                "report": report, "index": state,
                "behind": None if report is None or state.last_seq is None
                else state.last_seq - (report.last_seq or 0)}

    # -- pages ----------------------------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        viewer = self.gate.viewer(request)
        if viewer is None:
            return RedirectResponse("/login", status_code=303)
        return RedirectResponse("/console" if viewer.role.sees_console else "/dealer",
                                status_code=303)

    async def dealer(self, request: Request) -> Response:
        viewer = self.gate.guard(request, console=False)
        if not isinstance(viewer, Session):
            return viewer
        return self.gate.page("dealer.html", viewer, view=self.broadcast.latest)

    async def dealer_state(self, request: Request) -> Response:
        viewer = self.gate.viewer(request)
        if viewer is None:
            return JSONResponse({"error": "log in"}, status_code=401)
        return JSONResponse({**self.broadcast.latest,
                             "supervisor": self.presence.describe(viewer.id),
                             "supervisors": self.actions.supervisor_names(viewer),
                             "badge": self._badge_state(request)})

    def _badge_state(self, request: Request) -> dict[str, object] | None:
        """``{"needs_pin", "online"}`` for a screen the kiosk's badge reader answers (a viewer
        on loopback at a table with a reader), else None: the dialog then asks for a name."""
        if self.badge_reader is None or not is_loopback_address(self.gate.address(request)):
            return None
        return {"needs_pin": self.badge_needs_pin, "online": self.badge_reader.online}

    async def dealer_events(self, request: Request) -> Response:
        viewer = self.gate.viewer(request)
        if viewer is None:
            return JSONResponse({"error": "log in"}, status_code=401)
        queue = self.broadcast.subscribe(viewer.id, viewer.name)
        if isinstance(queue, StreamLimit):
            what = {StreamLimit.SESSION: "this login has too many screens open",
                    StreamLimit.ACCOUNT: "this account has too many screens open",
                    StreamLimit.TOTAL: "too many screens open"}[queue]
            return JSONResponse({"error": what}, status_code=429 if queue is not
                                StreamLimit.TOTAL else 503)

        async def stream() -> AsyncIterator[str]:
            try:
                yield f"data: {json.dumps(self.broadcast.latest)}\n\n"
                while True:
                    try:
                        view = await asyncio.wait_for(queue.get(), HEARTBEAT_SECONDS)
                    except TimeoutError:
                        yield ": alive\n\n"
                        continue
                    yield f"data: {json.dumps(view)}\n\n"
            finally:
                self.broadcast.unsubscribe(queue)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"x-accel-buffering": "no"})

    async def console(self, request: Request) -> Response:
        viewer = self.gate.guard(request, console=True)
        if not isinstance(viewer, Session):
            return viewer
        wanted, problems = RoundFilter.from_query(request.query_params)
        await asyncio.to_thread(self._catch_up)
        withheld = await self._withheld_from(viewer)
        hidden = await asyncio.to_thread(withheld_round, self.index, withheld) \
            if wanted.card else None
        rows, before = await asyncio.to_thread(search_rounds, self.index, wanted,
                                               hide_cards_of=hidden)
        damaged = await asyncio.to_thread(self._damaged, [row["id"] for row in rows])
        next_link = None if before is None else \
            "/console?" + urlencode(wanted.query_string(before=before))
        csv_link = "/console/rounds.csv?" + urlencode(wanted.query_string())
        export_link = "/console/export?" + urlencode(
            {"since": wanted.since, "until": wanted.until}) if wanted.since or wanted.until \
            else None
        return self.gate.page("console.html", viewer, rows=rows, wanted=wanted, problems=problems,
                         next_link=next_link, games=games(self.index), export_link=export_link,
                         integrity=self.integrity(), tables=self.index.tables,
                         damaged=damaged, csv_link=csv_link)

    async def rounds_csv(self, request: Request) -> Response:
        """The rounds list (the same filters) as CSV, streamed and bounded
        (:mod:`controller.web.roundscsv`)."""
        viewer = self.gate.guard(request, console=True)
        if not isinstance(viewer, Session):
            return viewer
        wanted, problems = RoundFilter.from_query(request.query_params)
        if problems:
            return self.gate.page("missing.html", viewer, status=400, what="; ".join(problems))
        await asyncio.to_thread(self._catch_up)
        withheld = await self._withheld_from(viewer)
        hidden = await asyncio.to_thread(withheld_round, self.index, withheld) \
            if wanted.card else None
        return StreamingResponse(
            rounds_csv(self.index, wanted, self.zone, self._damaged, hide_cards_of=hidden),
            media_type="text/csv; charset=utf-8",
            headers={"content-disposition": 'attachment; filename="rounds.csv"'})

    async def round(self, request: Request) -> Response:
        viewer = self.gate.guard(request, console=True)
        if not isinstance(viewer, Session):
            return viewer
        round_id = request.path_params["round_id"]
        await asyncio.to_thread(self._catch_up)
        entries = await asyncio.to_thread(read_round, self.index, self.key, round_id)
        summary = await asyncio.to_thread(self.index.query,
                                          "SELECT * FROM rounds WHERE id = ?", (round_id,))
        if not entries:
            return self.gate.page("missing.html", viewer, status=404, what=f"round {round_id}")
        withheld = await self._withheld_from(viewer)
        shown = [e for e in entries if withheld is None or e.seq < withheld]
        return self.gate.page("round.html", viewer, round_id=round_id, entries=shown,
                         withheld=len(entries) - len(shown),
                         summary=dict(summary[0]) if summary else None, hex_fields=hex_fields,
                         integrity=self.integrity(),
                         mismatches=[e for e in entries if e.problem])

    async def recall(self, request: Request) -> Response:
        viewer = self.gate.guard(request, console=True)
        if not isinstance(viewer, Session):
            return viewer
        rows = await asyncio.to_thread(recall, self.index)
        return self.gate.page("recall.html", viewer, rows=rows, integrity=self.integrity())

    async def overrides(self, request: Request) -> Response:
        viewer = self.gate.guard(request, console=True)
        if not isinstance(viewer, Session):
            return viewer
        withheld = await self._withheld_from(viewer)
        rows = [row for row in await asyncio.to_thread(overrides, self.index)
                if withheld is None or row["seq"] < withheld]
        return self.gate.page("overrides.html", viewer, rows=rows,
                         integrity=self.integrity())

    async def export(self, request: Request) -> Response:
        viewer = self.gate.guard(request, console=True)
        if not isinstance(viewer, Session):
            return viewer
        query = request.query_params
        withheld = await self._withheld_from(viewer)
        try:
            entries, selection, name = await asyncio.to_thread(self._select, query)
            if withheld is not None:
                everything = entries
                entries = lambda: _before(everything(), withheld)  # noqa: E731
                selection = {**selection, "withheld_from_seq": withheld}
            plan = await asyncio.to_thread(plan_export, entries())
        except ExportError as error:
            return self.gate.page("missing.html", viewer, status=400, what=str(error))
        report = self.watcher.integrity.report
        verified_hash = None if report is None or (
            withheld is not None and (report.last_seq or 0) >= withheld) else report.last_hash
        chunks = stream_export(entries(), plan, selection, {
            "verified_to_seq": None if report is None else report.last_seq,
            "verified_hash": verified_hash,
            "hmac_checked": bool(report and report.hmac_checked),
            "damage": None if report is None or report.problem is None
            else report.problem.describe()})
        return StreamingResponse(in_threads(chunks), media_type="application/json", headers={
            "content-disposition": f'attachment; filename="{name}"'})

    def _select(self, query: Any) -> tuple[Callable[[], Iterable[Any]], dict[str, Any], str]:
        """What to export, as a function that reads it afresh: it is read twice, once to
        check and count, once to stream (never held whole)."""
        if query.get("round"):
            round_id = str(query["round"])[:64]
            safe = re.sub(r"[^A-Za-z0-9._-]", "_", round_id)
            return (lambda: read_round(self.index, self.key, round_id)), {"round": round_id}, \
                f"round-{safe}.json"
        wanted, problems = RoundFilter.from_query(query)
        if problems or not (wanted.since and wanted.until):
            raise ExportError("export: give a round, or since and until (UTC times)")
        found = self.index.query("SELECT min(seq) AS a, max(seq) AS b, count(*) AS n "
                                 "FROM records WHERE ts >= ? AND ts <= ?",
                                 (wanted.since, wanted.until + "\uffff"))
        if not found or found[0]["n"] == 0:
            raise ExportError("nothing to export: no record in that span")
        if found[0]["b"] - found[0]["a"] >= MAX_EXPORT_RECORDS:
            raise ExportError(f"export: more than {MAX_EXPORT_RECORDS} records; narrow the span")
        first, last = found[0]["a"], found[0]["b"]
        return (lambda: iter_seqs(self.index, self.key, first, last)), \
            {"since": wanted.since, "until": wanted.until}, "span.json"

    async def verify_page(self, request: Request) -> Response:
        viewer = self.gate.guard(request, console=True)
        if not isinstance(viewer, Session):
            return viewer
        if request.method == "GET":
            return self.gate.page("verify.html", viewer, integrity=self.integrity())
        if (refusal := self.gate.refused(request, None)) is not None:
            return JSONResponse({"ok": False, "text": refusal.message}, status_code=403)
        if declared_too_large(request, MAX_UPLOAD):
            return JSONResponse({"ok": False, "text": f"too large: an export is at most "
                                 f"{MAX_UPLOAD // (1024 * 1024)} MB"}, status_code=413)
        if self._uploads >= MAX_UPLOADS:
            return JSONResponse({"ok": False, "text": "another export is being verified; try "
                                 "again in a moment"}, status_code=503)
        self._uploads += 1
        try:
            data = await read_bounded(request, MAX_UPLOAD)
            if data is None:
                return JSONResponse({"ok": False, "text": "too large"}, status_code=413)
            withheld = await self._withheld_from(viewer)
            check = await asyncio.to_thread(self._verify_upload, data, withheld)
        finally:
            self._uploads -= 1
        return JSONResponse({"ok": check.ok, "text": check.describe()})

    def _verify_upload(self, data: bytes, withheld: int | None) -> Any:
        """A record at or past ``withheld`` is not looked up: its hash would confirm or deny a
        guess at a face-down card (it is then "not in the journal" for this viewer)."""
        hashes = {entry.seq: entry.record.hash
                  for entry in read_listed(self.index, self.key, export_seqs(data))
                  if entry.record is not None and (withheld is None or entry.seq < withheld)}
        return verify_export(data, hashes, self.key)

