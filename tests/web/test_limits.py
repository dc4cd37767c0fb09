"""What keeps the web process as hard to abuse as the control socket, in process: the CSRF
token and the Origin check on every state-changing request, the login throttle per name and
per address (that an attacker cannot flush), the sessions per account, the event streams per
session, bounded uploads and streamed exports.

Accounts here hold cheap Argon2 hashes (the accounts file takes any Argon2 parameters), so a
thousand failed logins cost milliseconds, not the minutes the shipped parameters would.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from starlette.testclient import TestClient

from controller.web import live
from controller.web.app import WebApp
from controller.web.auth import (FREE_ADDRESS_FAILURES, MAX_SESSIONS_PER_ACCOUNT, Account,
                                 Authenticator, Role)
from controller.web.export import STREAM_CHUNK, build_export, plan_export, stream_export
from controller.web.live import Broadcast, StreamLimit
from controller.web.presence import SupervisorPresence
from controller.web.throttle import Backoff, Throttle
from controller.web.timeline import read_round
from testbed.journalgen import write_synthetic_journal

CHEAP = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
ORIGIN = "http://testserver"


def _accounts(*people: tuple[str, Role, str]) -> dict[str, Account]:
    return {name: Account(name, role, CHEAP.hash(password)) for name, role, password in people}


@pytest.fixture(name="app")
def app_fixture(tmp_path: Path) -> WebApp:
    journal = tmp_path / "journal"
    write_synthetic_journal(journal, 2)
    auth = Authenticator(_accounts(("dealer1", Role.DEALER, "deal-the-cards"),
                                   ("surv1", Role.SURVEILLANCE, "watch-the-table")))
    return WebApp(journal_dir=journal, index_path=tmp_path / "i.sqlite",
                  socket_path=tmp_path / "no-table.sock", key=None, auth=auth,
                  local_role=None, poll=3600)


@pytest.fixture(name="client")
def client_fixture(app: WebApp) -> Iterator[TestClient]:
    with TestClient(app.asgi, follow_redirects=False) as client:
        yield client


def _login(client: TestClient, name: str, password: str) -> str:
    """Log in; the page's CSRF token."""
    assert client.post("/login", data={"name": name, "password": password},
                       headers={"origin": ORIGIN}).status_code == 303
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', client.get("/dealer").text)
    assert found is not None
    return found.group(1)


# -- CSRF and Origin -----------------------------------------------------------------------------

def test_a_command_without_the_csrf_token_is_refused(client: TestClient) -> None:
    """From the right origin but without the session's token (or with another session's), a
    command is refused 403 before it reaches the table; with it, it goes through (to a table
    that is not there: ``unavailable``)."""
    token = _login(client, "dealer1", "deal-the-cards")
    body = {"verb": "round.open", "args": {}}
    for headers in ({"origin": ORIGIN}, {"origin": ORIGIN, "x-csrf-token": "x" + token}):
        refused = client.post("/dealer/command", json=body, headers=headers)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "csrf"
    passed = client.post("/dealer/command", json=body,
                         headers={"origin": ORIGIN, "x-csrf-token": token})
    assert passed.status_code == 200 and passed.json()["error"]["code"] == "unavailable"
    pin = client.post("/dealer/supervisor", json={"name": "x", "pin": "123456"},
                      headers={"origin": ORIGIN})
    assert pin.status_code == 403 and pin.json()["error"]["code"] == "csrf"


@pytest.mark.parametrize("headers", [
    {"origin": "http://testserver:8641"},  # another port on the same host: the same site
    {"origin": "https://testserver"},
    {"origin": "null"},
    {"referer": "http://evil.example/dealer"},
    {},
], ids=["other-port", "other-scheme", "null", "other-referer", "neither"])
def test_a_command_from_another_origin_is_refused(client: TestClient,
                                                  headers: dict[str, str]) -> None:
    """With the right CSRF token, a request whose Origin (or, without one, Referer) is not
    this app's own, or that names neither, is refused 403: SameSite cookies would let a page
    on another port of this host send them."""
    token = _login(client, "dealer1", "deal-the-cards")
    refused = client.post("/dealer/command", json={"verb": "round.open"},
                          headers={**headers, "x-csrf-token": token})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "origin"
    by_referer = client.post("/dealer/command", json={"verb": "round.open"},
                             headers={"referer": ORIGIN + "/dealer", "x-csrf-token": token})
    assert by_referer.status_code == 200


def test_login_and_logout_check_the_origin_and_the_token(client: TestClient) -> None:
    """A login form posted from elsewhere is refused (login CSRF); a logout without the
    page's token does not log out."""
    elsewhere = client.post("/login", data={"name": "dealer1", "password": "deal-the-cards"},
                            headers={"origin": "http://testserver:9999"})
    assert elsewhere.status_code == 403
    token = _login(client, "dealer1", "deal-the-cards")
    assert client.post("/logout", data={}, headers={"origin": ORIGIN}).status_code == 403
    assert client.get("/dealer/state").status_code == 200
    assert client.post("/logout", data={"csrf_token": token},
                       headers={"origin": ORIGIN}).status_code == 303
    assert client.get("/dealer/state").status_code == 401


def test_a_surveillance_session_does_not_command(client: TestClient) -> None:
    token = _login(client, "surv1", "watch-the-table")
    refused = client.post("/dealer/command", json={"verb": "round.open"},
                          headers={"origin": ORIGIN, "x-csrf-token": token})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "role"


# -- the login throttle ----------------------------------------------------------------------

def test_a_locked_name_stays_locked_whatever_else_fails() -> None:
    """The finding: 1,100 failures under other names (from other addresses) flushed a locked
    name out of the failure table and let it be guessed at once. Now a locked name is never
    evicted."""
    people = [("ann", Role.SURVEILLANCE, "correct horse")] + \
        [(f"n{i}", Role.DEALER, "other password") for i in range(1100)]
    auth = Authenticator(_accounts(*people))
    for _ in range(10):  # the 10th failure locks ann for 64 s
        assert auth.login("ann", "wrong", "10.0.0.1") is None
    for i in range(1100):
        assert auth.login(f"n{i}", "wrong", f"10.1.{i // 250}.{i % 250}") is None
    assert auth.login("ann", "correct horse", "10.2.0.1") is None
    assert auth.login("n5", "other password", "10.2.0.2") is not None


def test_one_address_trying_many_names_is_throttled() -> None:
    """Failures from one address under ever new names make that address hot: from it, new
    names (guesses) are refused without a try; a real account that has not failed there still
    logs in (every kiosk user is 127.0.0.1: issue 36, finding 8); another address is not
    affected."""
    auth = Authenticator(_accounts(("ann", Role.DEALER, "correct horse")))
    for i in range(FREE_ADDRESS_FAILURES + 1):
        assert auth.login(f"guess{i}", "wrong", "10.9.9.9") is None
    assert auth.login("another-guess", "correct horse", "10.9.9.9") is None
    assert auth.login("ann", "correct horse", "10.9.9.9") is not None
    assert auth.login("ann", "correct horse", "10.9.9.8") is not None


def test_the_throttle_table_fails_closed_when_every_key_is_locked() -> None:
    """A full table of locked keys refuses a key it does not hold until one unlocks; quiet,
    unlocked keys are forgotten to make room."""
    now = [0.0]
    throttle = Throttle(Backoff(free=1, first=10.0, capacity=3, forget_after=60.0), "test",
                        clock=lambda: now[0])
    for key in ("a", "b", "c"):
        throttle.failed(key)
    assert throttle.wait("new") == pytest.approx(10.0)
    throttle.failed("new")
    assert len(throttle) == 3 and throttle.wait("new") > 0
    now[0] = 100.0
    assert throttle.wait("new") == 0.0
    throttle.failed("new")
    assert throttle.wait("new") == pytest.approx(10.0) and len(throttle) == 1


# -- sessions and streams --------------------------------------------------------------------

def test_one_accounts_logins_never_log_out_another() -> None:
    """The finding: 260 dealer logins logged surveillance out (a global table that evicted the
    oldest). Now an account's sessions are capped by evicting its own oldest."""
    auth = Authenticator(_accounts(("dealer1", Role.DEALER, "deal-the-cards"),
                                   ("surv1", Role.SURVEILLANCE, "watch-the-table")))
    watcher = auth.login("surv1", "watch-the-table")
    tokens = [auth.login("dealer1", "deal-the-cards") for _ in range(260)]
    assert auth.session(watcher) is not None
    assert auth.sessions_of("dealer1") == MAX_SESSIONS_PER_ACCOUNT
    assert auth.session(tokens[-1]) is not None and auth.session(tokens[0]) is None


def test_one_sessions_streams_do_not_turn_other_screens_away() -> None:
    """The finding: 64 event streams from one dealer made every other screen 503. Now a
    session has its own share; another session (and another account) still gets its stream."""

    async def scenario() -> tuple[list[object], object, object]:
        broadcast = Broadcast()
        mine = [broadcast.subscribe("dealer-session", "dealer1") for _ in range(64)]
        other = broadcast.subscribe("surveillance-session", "surv1")
        same_account = broadcast.subscribe("dealer-kiosk-2", "dealer1")
        return mine, other, same_account

    mine, other, same_account = asyncio.run(scenario())
    assert sum(1 for q in mine if isinstance(q, asyncio.Queue)) == live.MAX_PER_SESSION
    assert mine[-1] is StreamLimit.SESSION
    assert isinstance(other, asyncio.Queue) and isinstance(same_account, asyncio.Queue)


def test_the_supervisor_leaves_after_the_idle_time() -> None:
    """A supervisor's presence at a screen ends ``idle_seconds`` after the last supervisor
    action (each action starts the time again)."""
    now = [0.0]
    presence = SupervisorPresence(120.0, clock=lambda: now[0])
    presence.arrive("screen", "super1")
    now[0] = 100.0
    assert presence.present("screen", touch=True) is not None
    now[0] = 219.0
    assert presence.describe("screen") == {"name": "super1", "expires_in": 1}
    now[0] = 220.5
    assert presence.describe("screen") is None and presence.present("screen") is None


# -- uploads and exports ---------------------------------------------------------------------

def test_an_upload_declared_too_large_is_refused_unread(client: TestClient) -> None:
    """A body whose Content-Length passes the limit is refused before a byte of it is read
    (the chunked case, and the wait for a body that never comes, run against the real
    process in test_limits_process.py)."""
    _login(client, "surv1", "watch-the-table")
    declared = client.post("/console/verify", content=b"{}",
                           headers={"origin": ORIGIN, "content-length": str(100 * 2**20)})
    assert declared.status_code == 413 and "too large" in declared.json()["text"]


def test_an_export_is_streamed_and_equals_the_document(app: WebApp,
                                                       client: TestClient) -> None:
    """The streamed export is the same document build_export makes, sent in chunks of about
    STREAM_CHUNK bytes (never the whole file at once); the console serves it streamed."""
    assert app.watcher.ready.wait(30)
    round_id = app.index.query("SELECT id FROM rounds LIMIT 1")[0]["id"]
    entries = read_round(app.index, None, round_id)
    document = build_export(entries, {"round": round_id}, {})
    chunks = list(stream_export(entries, plan_export(entries), {"round": round_id}, {}))
    streamed = json.loads(b"".join(chunks))
    assert {**streamed, "created": None} == {**document, "created": None}
    assert all(len(chunk) < STREAM_CHUNK + 64 * 1024 for chunk in chunks)
    _login(client, "surv1", "watch-the-table")
    served = client.get(f"/console/export?round={round_id}")
    assert served.status_code == 200 and "content-length" not in served.headers
    assert json.loads(served.content)["count"] == document["count"]


def test_the_kiosk_answers_only_to_a_loopback_host(tmp_path: Path) -> None:
    """Without accounts every loopback viewer is the kiosk's session; a page on a name that
    resolves to 127.0.0.1 (DNS rebinding: its own origin, so the origin check passes) is not
    that viewer and cannot command the table."""
    journal = tmp_path / "journal"
    write_synthetic_journal(journal, 1)
    app = WebApp(journal_dir=journal, index_path=tmp_path / "i.sqlite",
                 socket_path=tmp_path / "no-table.sock", key=None, auth=Authenticator({}),
                 local_role=Role.DEALER, poll=3600)
    with TestClient(app.asgi, base_url="http://127.0.0.1:8640") as kiosk:
        token = re.search(r'name="csrf-token" content="([^"]+)"', kiosk.get("/dealer").text)
        assert token is not None
        ok = kiosk.post("/dealer/command", json={"verb": "round.open"},
                        headers={"origin": "http://127.0.0.1:8640",
                                 "x-csrf-token": token.group(1)})
        assert ok.status_code == 200
        rebound = kiosk.post("http://rebind.example:8640/dealer/command",
                             json={"verb": "round.open"},
                             headers={"origin": "http://rebind.example:8640",
                                      "x-csrf-token": token.group(1)})
        assert rebound.status_code == 401
        assert kiosk.get("http://rebind.example:8640/dealer/state").status_code == 401


def test_a_command_body_with_a_key_given_twice_is_refused_by_name(
        client: TestClient, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 35: a command's body is read as strictly as the control socket reads a request
    (controller.strictjson). ``{"verb": "round.open", "verb": "round.close"}`` is refused 400,
    naming the key given twice, and logged; it never reaches the table as whichever verb the
    plain reader would have kept."""
    token = _login(client, "dealer1", "deal-the-cards")
    refused = client.post("/dealer/command",
                          content=b'{"verb": "round.open", "verb": "round.close", "args": {}}',
                          headers={"origin": ORIGIN, "x-csrf-token": token,
                                   "content-type": "application/json"})
    assert refused.status_code == 400
    problem = refused.json()["error"]
    assert problem["code"] == "bad_request" and "'verb' appears twice" in problem["message"]
    logged = capsys.readouterr()
    assert "web request body refused" in logged.out + logged.err
    assert "Traceback" not in logged.out + logged.err
