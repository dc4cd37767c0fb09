"""``tablectl floor web`` as a process, over HTTP: the web's accounts, roles, origin and CSRF
rules and headers; the listen rules; the console link; and never a face-down card."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.cookiejar import CookieJar
from pathlib import Path

import pytest

from controller.floor.machines import Machines, create_schema
from controller.floor.store import Store
from controller.journal.record import Record
from controller.service.visibility import Horizon
from tests.floor_page.conftest import PASSWORDS, FloorWeb, floor_config, start_floor_web
from tests.floor_page.floordb import apply_records, fill_floor, table_records

FACE_DOWN_TABLE = "T900"


class Browser:
    """A cookie-keeping HTTP client that does not follow redirects (to see them)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = CookieJar()

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: object, **kwargs: object) -> None:
                return None

        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar),
                                                  NoRedirect())

    def request(self, path: str, form: dict[str, str] | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
        data = None if form is None else urllib.parse.urlencode(form).encode()
        request = urllib.request.Request(self.base + path, data=data, headers=headers or {})
        try:
            with self.opener.open(request, timeout=30) as reply:
                return reply.status, dict(reply.headers), reply.read().decode()
        except urllib.error.HTTPError as error:
            body = error.read().decode()
            error.close()
            return error.code, dict(error.headers), body

    def login(self, name: str) -> int:
        status, _, _ = self.request("/login", {"name": name, "password": PASSWORDS[name]},
                                    {"Origin": self.base})
        return status

    def csrf(self) -> str:
        _, _, html = self.request("/floor")
        found = re.search(r'name="csrf-token" content="([^"]+)"', html)
        assert found is not None
        return found.group(1)


def face_down_prefix(journal: Path) -> tuple[list[Record], set[str]]:
    """What a 3CP table's feed has sent while its dealer's hand lies face down: the records up
    to the dealer's first card, less what the feed's horizon holds back; and the held cards."""
    records = table_records(journal, FACE_DOWN_TABLE)
    first = next(i for i, r in enumerate(records) if r.event_type == "card_assigned"
                 and r.payload.get("position") == "dealer")
    last = next(i for i, r in enumerate(records) if i > first
                and r.event_type == "dealer_revealed")
    prefix = records[:last]
    sent = Horizon().releasable(prefix)
    held = {str(r.payload["card"]) for r in prefix[sent:]
            if r.event_type == "card_assigned" and r.payload.get("position") == "dealer"}
    return prefix[:sent], held


@pytest.fixture(name="floor_db", scope="module")
def fixture_floor_db(tmp_path_factory: pytest.TempPathFactory, journals: list[Path]
                     ) -> tuple[Path, set[str]]:
    database = tmp_path_factory.mktemp("floor") / "floor.sqlite3"
    fill_floor(database, journals, 4)
    sent, held = face_down_prefix(journals[0])
    store = Store(str(database))
    create_schema(store)
    try:
        apply_records(store, Machines(), sent)
    finally:
        store.close()
    return database, held


@pytest.fixture(name="web", scope="module")
def fixture_web(floor_db: tuple[Path, set[str]], accounts: Path,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[FloorWeb]:
    config = floor_config(tmp_path_factory.mktemp("config"), floor_db[0])
    web = start_floor_web(config, "--accounts", str(accounts), "--console-url",
                          "https://{table}.pit.example:8640/console?site={site}")
    try:
        yield web
    finally:
        web.stop()


def test_supervisor_and_surveillance_see_the_floor_a_dealer_does_not(web: FloorWeb) -> None:
    """The console's roles (supervisor, surveillance) see the floor; a dealer is refused; no
    login is sent to the login page (a fetch gets 401 in words)."""
    anonymous = Browser(web.url)
    status, headers, _ = anonymous.request("/floor")
    assert status == 303 and headers["location"] == "/login"
    assert anonymous.request("/floor/tiles.json")[0] == 401
    for name in ("super1", "surv1"):
        browser = Browser(web.url)
        assert browser.login(name) == 303
        status, _, html = browser.request("/floor")
        assert status == 200 and html.count('class="tile') == 6  # 5 tables + the grid
    dealer = Browser(web.url)
    assert dealer.login("dealer1") == 303
    assert dealer.request("/floor")[0] == 403
    assert dealer.request("/floor/tiles")[0] == 403


def test_login_from_another_origin_and_logout_without_token_are_refused(web: FloorWeb) -> None:
    """The web's origin and CSRF rules: a login posted from another site's page is refused; a
    logout without the session's CSRF token is refused and the session stays; with it, it
    ends."""
    browser = Browser(web.url)
    status, _, body = browser.request("/login", {"name": "super1",
                                                 "password": PASSWORDS["super1"]},
                                      {"Origin": "http://evil.example"})
    assert status == 403 and "refused" in body
    assert browser.login("super1") == 303
    assert browser.request("/logout", {}, {"Origin": web.url})[0] == 403
    assert browser.request("/floor")[0] == 200
    assert browser.request("/logout", {"csrf_token": browser.csrf()}, {"Origin": web.url})[0] \
        == 303
    assert browser.request("/floor")[0] == 303


def test_pages_carry_the_webs_security_headers(web: FloorWeb) -> None:
    """Every answer carries the web's Content-Security-Policy (no inline script) and
    friends: the page's one script is its own file."""
    browser = Browser(web.url)
    browser.login("surv1")
    status, headers, html = browser.request("/floor")
    assert status == 200 and "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert re.findall(r"<script[^>]*>", html) == ['<script src="/floor/static/floor.js" defer>']


def test_a_tile_links_to_its_tables_console(web: FloorWeb) -> None:
    """A table's tile opens its rounds in its own surveillance console (the --console-url
    template, table and site filled URL-encoded)."""
    browser = Browser(web.url)
    browser.login("super1")
    html = browser.request("/floor/tiles")[2]
    assert 'href="https://T002.pit.example:8640/console?site=site1"' in html


def test_a_face_down_card_is_never_on_the_floor(web: FloorWeb,
                                                floor_db: tuple[Path, set[str]]) -> None:
    """A 3CP table mid-round, its dealer's hand face down: the floor holds what the feed sent
    (the horizon held the face-down records back), and no output of the page -- the page, the
    tiles, the figures, the JSON -- shows a held card, even to surveillance."""
    held = floor_db[1]
    assert held  # the round really has a face-down hand held back
    browser = Browser(web.url)
    browser.login("surv1")
    tiles = json.loads(browser.request("/floor/tiles.json")[2])["tables"]
    tile = next(t for t in tiles if t["table"] == FACE_DOWN_TABLE)
    assert tile["state"] not in ("dealer_revealed", "round_settled") and tile["round"]
    for path in ("/floor", "/floor/tiles", "/floor/figures", "/floor/tiles.json"):
        status, _, body = browser.request(path)
        assert status == 200
        for card in held:
            assert re.search(rf"(?<![A-Za-z0-9]){card}(?![A-Za-z0-9])", body) is None, \
                (path, card)


def _floor_web_fails(config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller", "floor", "web", "--config",
                           str(config), "--port", "0", *extra], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize(("extra", "named"), [
    (("--listen", "0.0.0.0"), "remote access needs TLS"),
    (("--console-url", "https://{tabel}.example/"), "unknown placeholder {tabel}"),
    (("--console-url", "javascript:alert(1)"), "not an http(s) URL"),
    (("--shifts", "25:00"), "'25:00' is not a time")])
def test_an_unsafe_or_bad_setting_is_one_line(floor_db: tuple[Path, set[str]],
                                              tmp_path: Path, extra: tuple[str, ...],
                                              named: str) -> None:
    """The web's listen rules hold (another address needs TLS and accounts); a bad console
    template or shift is named; each is one line, exit 2, no traceback, no listener."""
    done = _floor_web_fails(floor_config(tmp_path, floor_db[0]), *extra)
    assert done.returncode == 2 and named in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "listening on" not in done.stderr


def test_a_missing_floor_database_is_named(tmp_path: Path) -> None:
    """The page only reads: no floor database is one line naming it, none is made."""
    missing = tmp_path / "none.sqlite3"
    done = _floor_web_fails(floor_config(tmp_path, missing))
    assert done.returncode == 2 and "no floor database there" in done.stderr, done.stderr
    assert not missing.exists()


def test_the_floor_page_holds_the_webs_gate_rather_than_inheriting_the_web_app() -> None:
    """Issue 45: one gate for every page, composed. The floor page is no ``WebApp`` (whose
    constructor opens a journal and a table socket, and which it used to subclass while
    skipping that constructor); both hold a :class:`controller.web.gate.Gate`, and the login
    and logout routes are the gate's own."""
    from controller.floor.page.app import FloorPage
    from controller.web.app import WebApp
    from controller.web.gate import Gate

    assert not issubclass(FloorPage, WebApp) and FloorPage.__mro__[1:] == (object,)
    for route in ("login_page", "logout", "viewer", "refused", "page", "guard"):
        assert hasattr(Gate, route) and not hasattr(WebApp, route) \
            and not hasattr(FloorPage, route), route
