"""The one gate for every page of tablectl: who is asking, and may they.

Logging in and out, sessions, the kiosk's loopback-only local session, the origin and CSRF
checks and the page a refusal renders. The surveillance console and dealer's screen
(:class:`controller.web.app.WebApp`) and the floor page
(:class:`controller.floor.page.app.FloorPage`) each hold one, built from the parts it reads
(the accounts, the kiosk's role, TLS, the supervisors' presence, the templates): composed,
so the floor page, which has no journal and no table socket, no longer inherits the web app
and skips its constructor (issue 45).
"""

from __future__ import annotations

import asyncio
from typing import Any

from jinja2 import Environment
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from controller.roles import Role
from controller.web.auth import Authenticator, Session
from controller.web.badge import is_loopback_address
from controller.web.bodies import small_form
from controller.web.guard import (CSRF_FIELD, CSRF_HEADER, GuardRefusal, csrf_refusal,
                                  origin_refusal)
from controller.web.presence import SupervisorPresence

COOKIE = "tablectl_session"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


class Gate:
    """``Gate(auth=..., local_role=..., tls=..., presence=..., templates=...)``: the session of
    a request, the refusal of a state-changing one, a rendered page, and the login and logout
    routes."""

    def __init__(self, *, auth: Authenticator, local_role: Role | None, tls: bool,
                 presence: SupervisorPresence, templates: Environment) -> None:
        self.auth = auth
        self.local_role = local_role
        self.tls = tls
        self.presence = presence
        self.templates = templates

    def viewer(self, request: Request) -> Session | None:
        """The session of this request. Without accounts every loopback viewer is the kiosk's
        one session, but only when the request names a loopback host: a page on another name
        that resolves to 127.0.0.1 (DNS rebinding) is its own origin, passes the origin check,
        and carries no cookie to stop it."""
        if self.local_role is not None:
            if (request.url.hostname or "").lower() not in LOOPBACK_HOSTS:
                return None
            return self.auth.local(self.local_role)
        return self.auth.session(request.cookies.get(COOKIE))

    def own_origin(self, request: Request) -> str:
        return f"{request.url.scheme}://{request.url.netloc}"

    def refused(self, request: Request, viewer: Session | None,
                form_token: str | None = None) -> GuardRefusal | None:
        """Why a state-changing request is refused: another origin, or no matching CSRF token
        (``viewer`` None: the origin alone, for the login form)."""
        found = origin_refusal(request.headers, self.own_origin(request))
        if found is not None or viewer is None:
            return found
        return csrf_refusal(request.headers.get(CSRF_HEADER) or form_token, viewer.csrf)

    @staticmethod
    def address(request: Request) -> str:
        return request.client.host if request.client else ""

    def page(self, name: str, viewer: Session | None, status: int = 200, **values: Any
             ) -> HTMLResponse:
        html = self.templates.get_template(name).render(viewer=viewer, **values)
        return HTMLResponse(html, status_code=status)

    def guard(self, request: Request, console: bool) -> Session | Response:
        viewer = self.viewer(request)
        if viewer is None:
            return RedirectResponse("/login", status_code=303)
        if console and not viewer.role.sees_console:
            return self.page("denied.html", viewer, status=403)
        return viewer

    async def login_page(self, request: Request) -> Response:
        """The password form, and at the kiosk (a loopback client) the dealers with a PIN as
        buttons and a PIN pad: a dealer logs in by taps (issue 36). Only the kiosk gets the
        names and takes a PIN: elsewhere the page lists nobody and a PIN opens nothing."""
        kiosk = is_loopback_address(self.address(request))
        dealers = self.auth.pin_dealers() if kiosk else []
        if request.method == "GET":
            return self.page("login.html", None, problem=None, dealers=dealers)
        if (refusal := self.refused(request, None)) is not None:
            return self.page("login.html", None, status=403, problem=refusal.message,
                             dealers=dealers)
        form = await small_form(request)
        by_pin = "pin" in form
        if by_pin and not kiosk:
            return self.page("login.html", None, status=403, dealers=dealers,
                             problem="A PIN logs in only at the table's own screen.")
        check = self.auth.login_pin if by_pin else self.auth.login
        token = await asyncio.to_thread(check, form.get("name", ""),
                                        form.get("pin" if by_pin else "password", ""),
                                        self.address(request))
        if token is None:
            return self.page("login.html", None, status=401, dealers=dealers,
                             problem=f"Wrong name or {'PIN' if by_pin else 'password'} "
                                     "(or too many tries: wait).")
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=self.tls,
                            path="/")
        return response

    async def logout(self, request: Request) -> Response:
        viewer = self.viewer(request)
        if viewer is not None:
            form = await small_form(request)
            refusal = self.refused(request, viewer, form.get(CSRF_FIELD))
            if refusal is not None:
                return self.page("denied.html", viewer, status=403, why=refusal.message)
            self.presence.leave(viewer.id)
            self.auth.logout(request.cookies.get(COOKIE))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response


__all__ = ["COOKIE", "Gate", "LOOPBACK_HOSTS"]
