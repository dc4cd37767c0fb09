"""The dealer's screen commands a real table: the service's wiring (a firmware_sim shuffler on a
real pty, the real table handler) behind a real control socket, and the web app in process
(Starlette's TestClient) sending through that socket as the person logged in.

The socket's policy makes this process a member of the web group only (the group lookup is
injected, as in the control tests: tests cannot create system groups), so every command the
table sees was delegated and judged in the role the socket allowed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from controller.journal.reader import iter_entries
from controller.service.control.server import AccessPolicy, ControlClient, ControlServer
from controller.web.app import WebApp
from controller.web.auth import Authenticator, Role, add_account, load_accounts
from tests.controller.service.operator_rig import Rig

OPERATORS, SURVEILLANCE, SUPERVISORS, WEB = "ops", "surv", "sups", "web"
ORIGIN = {"origin": "http://testserver"}
PIN = "246810"


@dataclass
class Screen:
    """A logged-in browser on the dealer's screen: the client and its CSRF token."""

    client: TestClient
    token: str

    def post(self, path: str, body: Mapping[str, Any] | None = None) -> Any:
        return self.client.post(path, json=dict(body or {}),
                                headers={**ORIGIN, "x-csrf-token": self.token})

    def command(self, verb: str, **args: Any) -> Any:
        return self.post("/dealer/command", {"verb": verb, "args": args})


@pytest.fixture(name="rig")
def rig_fixture(tmp_path: Path) -> Iterator[Rig]:
    rig = Rig(tmp_path, "rws-three-card-poker").start()
    try:
        yield rig
    finally:
        rig.close()


@pytest.fixture(name="socket_path")
def socket_fixture(tmp_path: Path, rig: Rig) -> Iterator[Path]:
    """The table's own handler behind a socket where this process is only the web process."""
    assert rig.wiring is not None and rig.wiring.handler is not None
    policy = AccessPolicy(OPERATORS, SURVEILLANCE, supervisors_group=SUPERVISORS,
                          groups_of=lambda uid, gid: frozenset({WEB, SURVEILLANCE}),
                          superusers=frozenset(), web_group=WEB,
                          web_roles=frozenset({Role.DEALER, Role.SUPERVISOR}))
    with ControlServer(tmp_path / "c.sock", rig.wiring.handler, policy) as server:
        yield server.path


@pytest.fixture(name="app")
def app_fixture(tmp_path: Path, rig: Rig, socket_path: Path) -> WebApp:
    accounts = tmp_path / "accounts"
    add_account(accounts, "dealer1", Role.DEALER, "deal-the-cards")
    add_account(accounts, "super1", Role.SUPERVISOR, "pit-boss-ok", pin=PIN)
    return WebApp(journal_dir=tmp_path / "journal", index_path=tmp_path / "i.sqlite",
                  socket_path=socket_path, key=None,
                  auth=Authenticator(load_accounts(accounts)), local_role=None, poll=3600)


def _login(client: TestClient, name: str, password: str) -> Screen:
    answer = client.post("/login", data={"name": name, "password": password}, headers=ORIGIN,
                         follow_redirects=False)
    assert answer.status_code == 303, answer.text
    page = client.get("/dealer").text
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', page)
    assert found is not None, page
    return Screen(client, found.group(1))


def _decisions(rig: Rig) -> list[Mapping[str, Any]]:
    return [e for e in rig.published if e.get("type") == "SupervisorDecided"]


def _journaled_actors(rig: Rig) -> list[str]:
    """Who the journal says gave each command (``role:actor``), in order."""
    return [str(entry.record.actor) for entry in iter_entries([rig.tmp / "journal"], strict=False)
            if entry.record.actor and ":" in entry.record.actor]


def test_the_dealer_runs_the_round_in_their_own_name(app: WebApp, rig: Rig) -> None:
    """A dealer's command reaches the table as dealer1, a dealer, through the web process's
    account; the table's answer comes back as ``{"ok": true, "result": ...}``, its refusal as
    ``ok: false`` with HTTP 200."""
    with TestClient(app.asgi) as client:
        screen = _login(client, "dealer1", "deal-the-cards")
        opened = screen.command("round.open")
        assert opened.status_code == 200 and opened.json()["ok"], opened.text
        assert opened.json()["result"]["state"] == "betting"
        again = screen.command("round.open")
        assert again.status_code == 200 and again.json()["ok"] is False
        assert again.json()["error"]["code"] == "refused"
    actors = _journaled_actors(rig)
    assert actors and all(a.startswith("dealer:dealer1 [operator via tablectl web] (uid ")
                          for a in actors), actors


def test_the_dealer_cannot_take_a_supervisors_decision_by_any_route(
        app: WebApp, rig: Rig, socket_path: Path) -> None:
    """Without a supervisor at the screen a dealer's supervisor verb is refused (403); the
    dealer's password, or a PIN under the dealer's name, does not make a supervisor; and the
    socket itself refuses the decision from a dealer whom the web process names (RWS-3CP: the
    table gives voids to a Pit Supervisor or above)."""
    with TestClient(app.asgi) as client:
        screen = _login(client, "dealer1", "deal-the-cards")
        assert screen.command("round.open").json()["ok"]
        refused = screen.command("supervisor.void", reason="dealer tries")
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "role"
        assert screen.command("journal.acknowledge", reason="x").status_code == 403
        for name, pin in (("dealer1", "deal-the-cards"), ("dealer1", PIN)):
            denied = screen.post("/dealer/supervisor", {"name": name, "pin": pin}).json()
            assert denied["ok"] is False and denied["error"]["code"] == "denied"
        assert client.get("/dealer/state").json()["supervisor"] is None
        assert screen.command("supervisor.void", reason="again").status_code == 403
    with ControlClient(socket_path) as web_account:
        with pytest.raises(Exception) as caught:
            web_account.request("supervisor.void", {"reason": "named dealer"},
                                acting_for={"name": "dealer1", "role": "operator"})
    assert "Pit Supervisor" in str(caught.value)
    assert _decisions(rig) == []
    assert rig.status()["state"] == "betting"


def test_a_supervisor_answers_at_the_dealers_screen(app: WebApp, rig: Rig) -> None:
    """super1 enters name and PIN on the dealer's session: the void is journaled as super1, a
    supervisor, through the web process's account (never as the dealer); after the
    supervisor's logout the dealer's session is a dealer's again."""
    with TestClient(app.asgi) as client:
        screen = _login(client, "dealer1", "deal-the-cards")
        assert screen.command("round.open").json()["ok"]
        arrived = screen.post("/dealer/supervisor", {"name": "super1", "pin": PIN}).json()
        assert arrived == {"ok": True, "supervisor": "super1", "expires_in": 120}
        state = client.get("/dealer/state").json()
        assert state["supervisor"]["name"] == "super1" and state["supervisor"]["expires_in"] > 0
        voided = screen.command("supervisor.void", reason="foreign card on the layout")
        assert voided.status_code == 200 and voided.json()["ok"], voided.text
        assert screen.post("/dealer/supervisor/logout").json()["ok"]
        assert client.get("/dealer/state").json()["supervisor"] is None
        assert screen.command("round.open").json()["ok"]
        assert screen.command("supervisor.void", reason="dealer alone").status_code == 403
    (decision,) = _decisions(rig)
    assert str(decision["actor"]).startswith("super1 [supervisor via tablectl web] (uid ")
    assert "dealer1" not in str(decision["actor"])
    journaled = [a for a in _journaled_actors(rig) if "super1" in a]
    assert len(journaled) == 1 and journaled[0].startswith("supervisor:super1 [supervisor via")


def test_another_screen_does_not_borrow_the_supervisor(app: WebApp, rig: Rig) -> None:
    """The supervisor's presence belongs to the screen (session) where the PIN was entered:
    the same dealer logged in on another device gets nothing from it."""
    with TestClient(app.asgi) as at_table:
        elsewhere = TestClient(app.asgi)  # its own cookies; the app runs in at_table's lifespan
        table_screen = _login(at_table, "dealer1", "deal-the-cards")
        other_screen = _login(elsewhere, "dealer1", "deal-the-cards")
        assert table_screen.command("round.open").json()["ok"]
        assert table_screen.post("/dealer/supervisor", {"name": "super1", "pin": PIN}).json()["ok"]
        assert elsewhere.get("/dealer/state").json()["supervisor"] is None
        assert other_screen.command("supervisor.void", reason="x").status_code == 403
    assert _decisions(rig) == []


def test_a_dealers_attempt_at_a_supervisors_action_is_refused_and_journaled(
        app: WebApp, rig: Rig) -> None:
    """A dealer's supervisor verb (no supervisor at the screen) is refused (403) and the
    attempt is in the journal: the command under the dealer's own name and role, then the
    table's refusal naming the Pit Supervisor (RWS-3CP 5.1: voids are a supervisor's), each
    once per attempt. A 600-character reason is recorded in the socket's 500 (a bounded record);
    nothing a supervisor decides happens."""
    long_reason = "dealer tries " + "x" * 600
    with TestClient(app.asgi) as client:
        screen = _login(client, "dealer1", "deal-the-cards")
        assert screen.command("round.open").json()["ok"]
        void = screen.command("supervisor.void", reason="dealer tries")
        assert void.status_code == 403 and void.json()["error"]["code"] == "role"
        clear = screen.command("supervisor.clear-fault")
        assert clear.status_code == 403 and clear.json()["error"]["code"] == "role"
        assert screen.command("supervisor.void", reason=long_reason).status_code == 403
    records = list(iter_entries([rig.tmp / "journal"], strict=False))
    attempts = [e.record for e in records if e.record.event_type == "input_command"
                and e.record.payload["type"] in ("SupervisorDecision", "ClearDeviceFault")]
    assert [(r.payload["type"], r.payload["fields"]["role"]) for r in attempts] == [
        ("SupervisorDecision", "dealer"), ("ClearDeviceFault", "dealer"),
        ("SupervisorDecision", "dealer")]
    assert all(str(r.actor).startswith("dealer:dealer1 [operator via tablectl web] (uid ")
               for r in attempts)
    assert attempts[0].payload["fields"]["reason"] == "dealer tries"
    assert attempts[2].payload["fields"]["reason"] == long_reason[:500]
    refusals = [e.record for e in records if e.record.event_type == "command_refused"]
    assert [r.payload["command"] for r in refusals] == ["SupervisorDecision",
                                                        "ClearDeviceFault", "SupervisorDecision"]
    assert all(r.seq > a.seq for r, a in zip(refusals, attempts))
    assert "Pit Supervisor" in refusals[0].payload["reason"]
    assert _decisions(rig) == []
    assert rig.status()["state"] == "betting"


def test_a_supervisor_who_badges_in_is_journaled_by_name(tmp_path: Path, rig: Rig,
                                                         socket_path: Path) -> None:
    """At the kiosk (loopback) the supervisor keys the PIN and presents the badge to the
    simulated reader (pyusb's backend seam): the void is journaled as super1, a supervisor, and
    the badge id is nowhere in the journal."""
    from concurrent.futures import ThreadPoolExecutor

    from firmware_sim.usb.backend import SimUsbBackend
    from firmware_sim.usb.hid_scanner import HidScannerSim
    from tests.waiting import wait_until

    badge = "04A2-77F1-SUP1"
    accounts = tmp_path / "badge-accounts"
    add_account(accounts, "dealer1", Role.DEALER, "deal-the-cards")
    add_account(accounts, "super1", Role.SUPERVISOR, "pit-boss-ok", pin=PIN, badge=badge)
    sim = HidScannerSim(seed=9)
    app = WebApp(journal_dir=tmp_path / "journal", index_path=tmp_path / "b.sqlite",
                 socket_path=socket_path, key=None,
                 auth=Authenticator(load_accounts(accounts)), local_role=None, poll=3600,
                 badge_reader="usb:1209:5ca1", usb_backend=SimUsbBackend([sim]))
    try:
        with TestClient(app.asgi, client=("127.0.0.1", 50000)) as client, \
                ThreadPoolExecutor(1) as pool:
            screen = _login(client, "dealer1", "deal-the-cards")
            assert screen.command("round.open").json()["ok"]
            wait_until(lambda: app.badge_reader is not None and app.badge_reader.online,
                       "the badge reader is online")
            pending = pool.submit(screen.post, "/dealer/supervisor/badge", {"pin": PIN})
            wait_until(lambda: app.badges.waiting, "the screen waits for the badge")
            sim.type_code(badge)
            assert pending.result(timeout=30).json()["supervisor"] == "super1"
            voided = screen.command("supervisor.void", reason="foreign card on the layout")
            assert voided.status_code == 200 and voided.json()["ok"], voided.text
    finally:
        sim.close()
    (decision,) = _decisions(rig)
    assert str(decision["actor"]).startswith("super1 [supervisor via tablectl web] (uid ")
    journaled = [a for a in _journaled_actors(rig) if "super1" in a]
    assert len(journaled) == 1 and journaled[0].startswith("supervisor:super1 [supervisor via")
    journal = b"".join(p.read_bytes() for p in (rig.tmp / "journal").rglob("*") if p.is_file())
    assert badge.encode() not in journal
