"""The dealer view, accounts and config, and the app's headers, without a browser."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from controller.web.app import WebApp
from controller.web.auth import FREE_FAILURES, Authenticator, Role, add_account, load_accounts
from controller.web.config import load_web_config
from controller.web.dealer import dealer_view
from controller.web.errors import AccountsError, WebConfigError
from testbed.journalgen import write_synthetic_journal

LOOPBACK = "http://127.0.0.1"
"""The kiosk (no accounts) answers only to a loopback host."""
STATUS = {
    "round": 4, "state": "decisions", "game": "rws-three-card-poker",
    "wagers": [{"id": "a", "position": "1", "bet": "ante", "amount": 500}],
    "hands": {"1": ["AS", "KD", "2C"], "dealer": ["QH", "QS", "3D"]},
    "decisions_due": ["1"], "held_for": None,
    "device": {"name": "shuffler", "kind": "shuffler", "online": True,
               "operator": {"state": "ready", "hold": None, "faults": []}},
    "waits": [{"waits_for": "the decisions of 1", "way_out": "tablectl decide POS play|fold",
               "role": "dealer"}],
}


@pytest.mark.parametrize("state", ["dealing", "decisions", "dealt", "hold"])
def test_face_down_hand_is_hidden_before_the_reveal(state: str) -> None:
    """RWS-3CP 3.6: the dealer's hand is face down until the reveal; the screen gets ``None``
    for each card, whatever role reads the status."""
    view = dealer_view({**STATUS, "state": state})
    hands = {h["position"]: h["cards"] for h in view["hands"]}
    assert hands["dealer"] == [None, None, None]
    assert hands["1"] == ["AS", "KD", "2C"]


@pytest.mark.parametrize("state", ["revealed", "settled"])
def test_face_down_hand_is_shown_after_the_reveal(state: str) -> None:
    view = dealer_view({**STATUS, "state": state})
    assert {h["position"]: h["cards"] for h in view["hands"]}["dealer"] == ["QH", "QS", "3D"]


def test_unknown_game_shows_no_cards() -> None:
    """A status of a game this process does not know shows no hand rather than risk one."""
    assert dealer_view({**STATUS, "game": "no-such-game"})["hands"] == []


def test_next_step_in_dealer_words() -> None:
    assert dealer_view(STATUS)["next"] == "Ask box 1: play or fold"
    dealing = {**STATUS, "state": "dealing", "hands": {"1": []}}
    assert dealer_view(dealing)["next"] == "Deal box 1"
    held = {**STATUS, "state": "hold", "held_for": "exposed_card (RWS-3CP 5.1.2)",
            "waits": [{"waits_for": "x", "way_out": "tablectl supervisor continue | void",
                       "role": "supervisor"}]}
    view = dealer_view(held)
    assert view["next"] == "Call a supervisor: a card was exposed"
    assert [b["verb"] for b in view["hold"]["buttons"]] == ["supervisor.continue",
                                                           "supervisor.void"]
    assert dealer_view(None)["next"].startswith("Call a supervisor")


def test_wrong_password_refused_and_throttled(tmp_path: Path) -> None:
    """A wrong password gets no session; after FREE_FAILURES wrong tries even the right one
    waits (the same answer, so the throttle is no oracle); a missing account is refused."""
    path = tmp_path / "accounts"
    add_account(path, "ann", Role.SURVEILLANCE, "correct horse")
    auth = Authenticator(load_accounts(path))
    assert auth.login("ann", "wrong horse") is None
    assert auth.login("nobody", "correct horse") is None
    token = auth.login("ann", "correct horse")
    assert token is not None and auth.session(token).role is Role.SURVEILLANCE
    for _ in range(FREE_FAILURES):
        assert auth.login("ann", "wrong") is None
    assert auth.login("ann", "correct horse") is None
    with pytest.raises(AccountsError, match="at least 8"):
        add_account(path, "bob", Role.DEALER, "short")
    assert "ann:surveillance:$argon2id$" in path.read_text()
    assert path.stat().st_mode & 0o077 == 0


def test_remote_access_needs_tls_and_accounts(tmp_path: Path) -> None:
    """Listening beyond loopback without TLS, or without accounts, is refused at start."""
    with pytest.raises(WebConfigError, match="needs TLS"):
        load_web_config(None, listen="0.0.0.0")
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    cert.write_text("x")
    key.write_text("x")
    with pytest.raises(WebConfigError, match="needs accounts"):
        load_web_config(None, listen="0.0.0.0", tls_cert=str(cert), tls_key=str(key))
    assert load_web_config(None).loopback


def test_every_page_sends_the_content_security_policy(tmp_path: Path) -> None:
    """No inline script is allowed and nothing loads from another host; unauthenticated
    requests are sent to log in."""
    journal = tmp_path / "journal"
    write_synthetic_journal(journal, 3)
    app = WebApp(journal_dir=journal, index_path=tmp_path / "i.sqlite", socket_path=None,
                 key=None, auth=Authenticator({}), local_role=None, poll=3600)
    with TestClient(app.asgi, follow_redirects=False) as client:
        login = client.get("/login")
        assert "script-src 'self'" in login.headers["content-security-policy"]
        assert "<script>" not in login.text and "unsafe-inline" not in \
            login.headers["content-security-policy"]
        assert client.get("/console").headers["location"] == "/login"
        assert client.get("/dealer/state").status_code == 401


def test_time_span_export_reverifies_in_the_console(tmp_path: Path) -> None:
    """An export of a time span holds every record of the span and re-verifies on the verify
    page; an export of nothing is refused with a reason, not an empty file."""
    journal = tmp_path / "journal"
    write_synthetic_journal(journal, 4)
    app = WebApp(journal_dir=journal, index_path=tmp_path / "i.sqlite", socket_path=None,
                 key=None, auth=Authenticator({}), local_role=Role.SURVEILLANCE, poll=3600)
    with TestClient(app.asgi, base_url=LOOPBACK) as client:
        assert app.watcher.ready.wait(30)
        exported = client.get("/console/export?since=2000-01-01&until=2100-01-01")
        assert exported.status_code == 200
        document = exported.json()
        assert document["count"] == app.index.state().records
        answer = client.post("/console/verify", content=exported.content,
                             headers={"origin": LOOPBACK}).json()
        assert answer["ok"], answer
        empty = client.get("/console/export?since=1990-01-01&until=1990-01-02")
        assert empty.status_code == 400 and "nothing to export" in empty.text


def _console(tmp_path: Path, journal: Path, key: bytes | None) -> str:
    app = WebApp(journal_dir=journal, index_path=tmp_path / "k.sqlite", socket_path=None,
                 key=key, auth=Authenticator({}), local_role=Role.SURVEILLANCE, poll=3600)
    with TestClient(app.asgi, base_url=LOOPBACK) as client:
        assert app.watcher.ready.wait(30)
        return client.get("/console").text


def test_integrity_at_a_glance(tmp_path: Path) -> None:
    """The console says how far the chain is verified and whether the HMAC was checked, and
    names damage with its place: a keyed journal with its key is checked; without it, "NOT
    checked"; a record rewritten in the file is damage at its line and seq."""
    key = bytes(range(32))
    journal = tmp_path / "journal"
    write_synthetic_journal(journal, 2, key=key)
    checked = _console(tmp_path, journal, key)
    assert "chain verified up to seq" in checked and "HMAC checked" in checked
    assert "HMAC NOT checked (no key)" in _console(tmp_path, journal, None)
    path = sorted(journal.glob("journal-*.jsonl"))[0]
    lines = path.read_bytes().splitlines(keepends=True)
    lines[5] = lines[5].replace(b'"T1"', b'"T9"')
    path.write_bytes(b"".join(lines))
    damaged = _console(tmp_path, journal, key)
    assert "DAMAGE: altered at" in damaged and "line 6 (seq 6)" in damaged


def test_device_bytes_are_shown_as_hex() -> None:
    """Payload fields that carry device bytes (``raw``, ``dropped_hex``...) are picked out, at
    any depth, for the timeline's hex rows."""
    from controller.web.timeline import hex_fields
    payload = {"type": "FrameRejected", "fields": {"raw": "02a1ff03", "device": "shoe"},
               "dropped_hex": "7b22", "count": 2}
    assert hex_fields(payload) == [("fields.raw", "02a1ff03"), ("dropped_hex", "7b22")]


def test_passwd_sets_a_supervisors_pin(tmp_path: Path) -> None:
    """``tablectl web passwd FILE NAME supervisor --pin`` reads the password then the PIN from
    stdin and stores both as Argon2 hashes; the PIN then lets that supervisor in at a dealer's
    screen. A dealer's PIN (issue 36: the kiosk's login by taps) logs that dealer in and
    answers no hold. A surveillance account's PIN, or a PIN that is not 6-12 digits, is refused
    in one line."""
    import subprocess
    import sys

    path = tmp_path / "accounts"

    def passwd(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "controller", "web", "passwd", str(path),
                               *args], input=stdin, capture_output=True, text=True, timeout=60)

    made = passwd("super1", "supervisor", "--pin", stdin="pit-boss-ok\n246810\n")
    assert made.returncode == 0, made.stderr
    assert "with a PIN" in made.stdout
    account = load_accounts(path)["super1"]
    assert account.pin_hash is not None and account.pin_hash.startswith("$argon2id$")
    auth = Authenticator(load_accounts(path))
    assert auth.check_pin("super1", "246810") == account
    assert auth.check_pin("super1", "246811") is None
    assert passwd("dealer1", "dealer", "--pin", stdin="deal-the-cards\n135790\n").returncode == 0
    auth = Authenticator(load_accounts(path))
    assert auth.login_pin("dealer1", "135790") is not None
    assert auth.check_pin("dealer1", "135790") is None
    for args, stdin, why in ((("surv1", "surveillance", "--pin"), "watch-the-table\n246810\n",
                              "only a supervisor or a dealer"),
                             (("super2", "supervisor", "--pin"), "pit-boss-ok\n12ab\n",
                              "6-12 digits")):
        refused = passwd(*args, stdin=stdin)
        assert refused.returncode != 0 and why in refused.stderr
        assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1


def test_no_page_runs_sqlite_on_the_event_loop(tmp_path: Path) -> None:
    """Issue 35: a console page's queries run in worker threads, never on the event loop (a
    query waits for the index's lock, which a rebuild holds for its whole run). Every statement
    on the index's connection is traced with the thread it ran on; none may run where an event
    loop is running. A Pit Supervisor does not see face-down cards, so the withheld round is
    looked up too (card search)."""
    import asyncio
    import threading

    journal = tmp_path / "journal"
    write_synthetic_journal(journal, 6)
    app = WebApp(journal_dir=journal, index_path=tmp_path / "i.sqlite", socket_path=None,
                 key=None, auth=Authenticator({}), local_role=Role.SUPERVISOR, poll=3600)
    on_loop: list[str] = []

    def traced(statement: str) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        on_loop.append(f"{threading.current_thread().name}: {statement[:60]}")

    with TestClient(app.asgi, base_url=LOOPBACK) as client:
        assert app.watcher.ready.wait(30)
        app.index._db.set_trace_callback(traced)  # noqa: SLF001 (the one connection)
        round_id = app.index.query("SELECT id FROM rounds LIMIT 1")[0]["id"]
        for path in ("/console", "/console?card=QH", "/console/rounds.csv?card=QH",
                     f"/console/round/{round_id}", "/console/recall", "/console/overrides",
                     "/console/verify", "/console/export?since=2000-01-01&until=2100-01-01"):
            assert client.get(path).status_code == 200, path
    assert on_loop == [], on_loop


def test_the_dealer_screen_lists_the_supervisors_to_choose_from(tmp_path: Path) -> None:
    """Issue 36, finding 5: the supervisor logs in at the screen by choosing a name, not typing
    it: ``/dealer/state`` lists the supervisors with a PIN to a dealer's screen (a supervisor
    without a PIN cannot answer there, a dealer is not one) and to nobody else."""
    path = tmp_path / "accounts"
    add_account(path, "sam", Role.SUPERVISOR, "correct horse", pin="246813")
    add_account(path, "nopin", Role.SUPERVISOR, "correct horse")
    add_account(path, "dana", Role.DEALER, "correct horse")
    journal = tmp_path / "journal"
    write_synthetic_journal(journal, 1)
    for role, expected in ((Role.DEALER, ["sam"]), (Role.SURVEILLANCE, [])):
        app = WebApp(journal_dir=journal, index_path=tmp_path / f"{role.value}.sqlite",
                     socket_path=None, key=None, auth=Authenticator(load_accounts(path)),
                     local_role=role, poll=3600)
        with TestClient(app.asgi, base_url=LOOPBACK) as client:
            assert client.get("/dealer/state").json()["supervisors"] == expected
