"""The dealer's screen's state-changing routes: a command for the table, a supervisor's
arrival (name and PIN, or a badge at the kiosk's reader) and departure (docs/web.md,
"Commands from the dealer's screen").

Each takes a small JSON body, only from a logged-in viewer, only from this app's own origin
with the session's CSRF token (:meth:`WebApp.refused`); who acts is :func:`.commander.acting`,
and the socket judges the request again in that person's role.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from controller import strictjson
from controller.web.auth import Role, Session
from controller.web.badge import is_loopback_address
from controller.web.bodies import declared_too_large, error, read_bounded
from controller.web.commander import (Actor, TableCommander, acting, attempt_on_record,
                                      clipped)

if TYPE_CHECKING:
    from controller.web.app import WebApp

log = structlog.get_logger(__name__)

MAX_COMMAND_BYTES = 16 * 1024
"""A command's JSON body (the socket's own line limit is 64 kB)."""
MAX_NAME_CHARS = 64


class ScreenActions:
    """The routes, over the app's sessions, presence and guard."""

    def __init__(self, app: WebApp, commander: TableCommander) -> None:
        self.app = app
        self.commander = commander

    async def _json_action(self, request: Request) -> tuple[Session, dict[str, Any]] | Response:
        """The viewer and the JSON body of a state-changing request, or the refusal: 401 not
        logged in, 403 another origin or no CSRF token, 413 too large, 400 not a JSON object."""
        viewer = self.app.gate.viewer(request)
        if viewer is None:
            return error(401, "login", "log in first")
        if (refusal := self.app.gate.refused(request, viewer)) is not None:
            return error(403, refusal.code.value, refusal.message)
        data = None if declared_too_large(request, MAX_COMMAND_BYTES) else \
            await read_bounded(request, MAX_COMMAND_BYTES)
        if data is None:
            return error(413, "too_large", f"a request is at most {MAX_COMMAND_BYTES} bytes")
        try:
            body = strictjson.loads(data or b"{}")  # a key given twice is refused by name
        except strictjson.StrictJsonError as refused:
            log.warning("web request body refused", path=request.url.path, viewer=viewer.name,
                        problem=str(refused))
            return error(400, "bad_request", f"the body is not JSON: {refused}")
        if not isinstance(body, dict):
            return error(400, "bad_request", "the body is a JSON object")
        return viewer, body

    async def command(self, request: Request) -> Response:
        """``{"verb", "args"}`` -> the control socket, as the person who acts (a supervisor's
        verb: the supervisor present at this screen). 200 with ``ok: false`` when the table
        refuses; 403 for a role that may not; the socket judges it again. A dealer's
        supervisor's verb is 403 here and is still sent, as the dealer, for the table to refuse
        and the journal to record (:func:`.commander.attempt_on_record`)."""
        found = await self._json_action(request)
        if isinstance(found, Response):
            return found
        viewer, body = found
        verb, args = body.get("verb"), body.get("args", {})
        if not isinstance(verb, str) or not isinstance(args, dict) or \
                set(body) - {"verb", "args"}:
            return error(400, "bad_request", 'the body is {"verb": "...", "args": {...}}')
        actor = acting(viewer, verb, self.app.presence)
        if not isinstance(actor, Actor):
            if actor.code == "role" and (dealer := attempt_on_record(viewer, verb)) is not None:
                # the table refuses it again, and the journal keeps the attempt
                await asyncio.to_thread(self.commander.send, verb, clipped(args), dealer)
            return error(403 if actor.code == "role" else 400, actor.code, actor.message)
        answer = await asyncio.to_thread(self.commander.send, verb, args, actor)
        if answer.ok:
            return JSONResponse({"ok": True, "result": answer.result})
        return error(403 if answer.code == "forbidden" else 200, answer.code, answer.message)

    async def supervisor_login(self, request: Request) -> Response:
        """A supervisor's name and PIN at this screen: their verbs act as them until they log
        out or stay idle ``web.supervisor_idle_seconds``."""
        found = await self._json_action(request)
        if isinstance(found, Response):
            return found
        viewer, body = found
        name, pin = body.get("name"), body.get("pin")
        if not isinstance(name, str) or not isinstance(pin, str) \
                or len(name) > MAX_NAME_CHARS or len(pin) > MAX_NAME_CHARS:
            return error(400, "bad_request", 'the body is {"name": "...", "pin": "..."}')
        address = request.client.host if request.client else ""
        account = await asyncio.to_thread(self.app.auth.check_pin, name, pin, address)
        if account is None:
            return error(200, "denied", "wrong name or PIN (or too many tries: wait)")
        presence = self.app.presence.arrive(viewer.id, account.name)
        return JSONResponse({"ok": True, "supervisor": presence.name,
                             "expires_in": round(self.app.presence.idle_seconds)})

    async def supervisor_badge(self, request: Request) -> Response:
        """The kiosk's screen waits (``web`` :data:`.badge.BADGE_WAIT_SECONDS`) for the next
        badge read; the badge stands in for the name, and with ``web.badge_needs_pin`` the
        body's PIN must be that supervisor's too. Only a screen on loopback may wait: the reader
        is the kiosk's, and a badge presented there must log nobody in on another device."""
        found = await self._json_action(request)
        if isinstance(found, Response):
            return found
        viewer, body = found
        if self.app.badge_reader is None:
            return error(404, "no_reader", "this table has no badge reader")
        address = request.client.host if request.client else ""
        if not is_loopback_address(address):
            return error(403, "not_kiosk", "the badge reader answers the table's own screen only")
        pin = body.get("pin")
        needs_pin = self.app.badge_needs_pin
        if set(body) - {"pin"} or (needs_pin and (not isinstance(pin, str)
                                                  or len(pin) > MAX_NAME_CHARS)):
            return error(400, "bad_request",
                         '{"pin": "..."}' if needs_pin else "the body is {}")
        badge = await self.app.badges.wait(self.app.badge_wait_seconds)
        if badge is None:
            return error(200, "no_badge", "no badge was read: present it again")
        account = await asyncio.to_thread(self.app.auth.check_badge, badge, address)
        if account is not None and needs_pin:
            account = await asyncio.to_thread(self.app.auth.check_pin, account.name, str(pin),
                                              address)
        if account is None:
            return error(200, "denied", "unknown badge or wrong PIN (or too many tries: wait)")
        presence = self.app.presence.arrive(viewer.id, account.name)
        return JSONResponse({"ok": True, "supervisor": presence.name,
                             "expires_in": round(self.app.presence.idle_seconds)})

    def supervisor_names(self, viewer: Session) -> list[str]:
        """The accounts a supervisor may log in as at this screen by name and PIN, for the
        dialog to offer as buttons (no name typed at the kiosk). Only for a viewer of the
        dealer's screen (a dealer or supervisor session, or the kiosk's local one): the names
        are the people the pit sends to this table, not a secret; their PINs stay one, and
        the PIN throttle (3 free tries per name) is unchanged. ``GET /dealer/state`` carries
        them as ``supervisors``."""
        if viewer.role not in (Role.DEALER, Role.SUPERVISOR):
            return []
        return sorted(account.name for account in self.app.auth.accounts.values()
                      if account.role is Role.SUPERVISOR and account.pin_hash)

    async def supervisor_logout(self, request: Request) -> Response:
        found = await self._json_action(request)
        if isinstance(found, Response):
            return found
        viewer, _ = found
        self.app.presence.leave(viewer.id)
        return JSONResponse({"ok": True, "supervisor": None})
