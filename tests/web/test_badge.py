"""The kiosk's badge reader: the reader thread against a simulated HID reader behind pyusb's
backend seam (``SimUsbBackend``, never a patched ``usb``), the accounts file's badge field, the
config keys, and ``POST /dealer/supervisor/badge`` with the reader typing while the screen waits.
"""

from __future__ import annotations

import asyncio
import hashlib
import queue
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import structlog
from starlette.testclient import TestClient
from structlog.testing import capture_logs

from controller.web.app import WebApp
from controller.web.auth import Authenticator, Role, add_account, load_accounts
from controller.web.badge import BadgeReader, BadgeWaiters, open_badge_reader
from controller.web.config import load_web_config
from controller.web.errors import AccountsError, WebConfigError
from drivers.errors import DriverConfigError
from drivers.shoe.hid_codec import REPORT_SIZE
from firmware_sim.usb.backend import SimUsbBackend
from firmware_sim.usb.hid_scanner import HidScannerSim
from tests.waiting import wait_until

BADGE = "04A2-77F1-SUP1"
OTHER_BADGE = "04A2-0000-NOBODY"
PIN = "246810"
FAST_BACKOFF = (0.05, 0.2)
WAIT_SECONDS = 15.0
ORIGIN = {"origin": "http://127.0.0.1"}
KIOSK = ("127.0.0.1", 50000)


@pytest.fixture(name="sim")
def sim_fixture() -> Iterator[HidScannerSim]:
    sim = HidScannerSim(seed=1, serial="BADGE01")
    yield sim
    sim.close()


@pytest.fixture(name="backend")
def backend_fixture(sim: HidScannerSim) -> SimUsbBackend:
    return SimUsbBackend([sim])


@pytest.fixture(name="debug_logs", autouse=True)
def debug_logs_fixture() -> None:
    """Every level reaches ``capture_logs`` (the runner's byte log is DEBUG); the suite's
    autouse fixture restores the configuration after the test."""
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(0))


class Reads:
    """What the reader thread handed on, as a screen waiting for every read would take it."""

    def __init__(self) -> None:
        self.lines: queue.Queue[str] = queue.Queue()

    def deliver(self, badge: str) -> bool:
        self.lines.put(badge)
        return True

    def next(self) -> str:
        return self.lines.get(timeout=WAIT_SECONDS)


def started(backend: SimUsbBackend, reads: Reads) -> BadgeReader:
    reader = open_badge_reader("usb:1209:5ca1:BADGE01", reads.deliver, backend=backend,
                               backoff=FAST_BACKOFF)
    reader.start()
    wait_until(lambda: reader.online, "the reader is online")
    return reader


def _said(logs: list[dict[str, Any]]) -> str:
    return repr(logs)


def test_a_badge_typed_is_one_read_and_never_logged(backend: SimUsbBackend,
                                                    sim: HidScannerSim) -> None:
    """The simulated reader types the badge + Enter: one read, the id exactly; nothing logged
    carries it, not even keystroke by keystroke (the runner's DEBUG byte log is off here)."""
    reads = Reads()
    with capture_logs() as logs:
        reader = started(backend, reads)
        try:
            sim.type_code(BADGE)
            assert reads.next() == BADGE
            sim.type_code(OTHER_BADGE)
            assert reads.next() == OTHER_BADGE
        finally:
            reader.close()
    assert reader.reads == 2 and reader.dropped == 0
    assert BADGE not in _said(logs) and OTHER_BADGE not in _said(logs)
    assert not [e for e in logs if e["event"] == "rx"], "the badge's key reports were logged"


def test_lines_that_are_not_badges_are_dropped_and_the_reader_lives_on(
        backend: SimUsbBackend, sim: HidScannerSim) -> None:
    """A line over 64 characters, one far over the codec's bound, and one with a key that
    types nothing printable are each dropped and logged by why, never by content; the next
    badge is read as usual."""
    reads = Reads()
    too_long, far_too_long = "L" * 65, "F" * 100
    with capture_logs() as logs:
        reader = started(backend, reads)
        try:
            sim.type_code(too_long)
            sim.type_code(far_too_long)
            f1_key, enter = bytes([0, 0, 0x3A, 0, 0, 0, 0, 0]), bytes([0, 0, 0x28, 0, 0, 0, 0, 0])
            sim._queue_reports([bytes([0, 0, 0x17, 0, 0, 0, 0, 0]), bytes(REPORT_SIZE), f1_key,
                                bytes(REPORT_SIZE), enter, bytes(REPORT_SIZE)])
            sim.type_code(BADGE)
            assert reads.next() == BADGE
        finally:
            reader.close()
    assert reads.lines.empty() and reader.dropped == 3 and reader.running is False
    dropped = [e for e in logs if e["event"] == "badge_read_dropped"]
    assert [e["why"] for e in dropped] == ["longer than 64 characters",
                                          "unreadable keys, or too long",
                                          "unreadable keys, or too long"]
    assert "LLLLLLLL" not in _said(logs) and "FFFFFFFF" not in _said(logs)


def test_the_reader_unplugged_and_back(backend: SimUsbBackend, sim: HidScannerSim) -> None:
    """Unplugged: offline, logged once while it stays away; plugged back: reopened (bounded
    backoff) and the next badge is read."""
    reads = Reads()
    with capture_logs() as logs:
        reader = started(backend, reads)
        try:
            backend.unplug(sim)
            wait_until(lambda: not reader.online, "the reader went offline")
            backend.plug(sim)
            wait_until(lambda: reader.online, "the reader came back")
            sim.type_code(BADGE)
            assert reads.next() == BADGE
        finally:
            reader.close()
    offline = [e for e in logs if e["event"] == "badge_reader_deviceoffline"]
    online = [e for e in logs if e["event"] == "badge_reader_deviceonline"]
    assert len(offline) == 1 and len(online) == 2


def test_a_read_goes_only_to_the_screen_waiting_for_it() -> None:
    """Nobody waiting: the read is dropped (``deliver`` says so). A newer wait replaces an
    older one, which ends with nothing; a wait times out with nothing."""
    waiters = BadgeWaiters()
    assert waiters.deliver(BADGE) is False

    async def scenario() -> tuple[str | None, str | None, str | None]:
        older = asyncio.ensure_future(waiters.wait(WAIT_SECONDS))
        while not waiters.waiting:
            await asyncio.sleep(0.001)
        newer = asyncio.ensure_future(waiters.wait(WAIT_SECONDS))
        replaced = await older
        assert waiters.deliver(BADGE) is True
        read = await newer
        timed_out = await waiters.wait(0.05)
        return replaced, read, timed_out

    assert asyncio.run(scenario()) == (None, BADGE, None)
    assert waiters.waiting is False and waiters.deliver(BADGE) is False


# -- accounts ------------------------------------------------------------------------------------

def test_a_badge_is_stored_hashed_and_finds_its_supervisor(tmp_path: Path) -> None:
    """The fifth field is the badge id's Argon2id hash; the id finds its supervisor, another
    id nobody; a PIN-less supervisor with a badge round-trips; a four-field file still
    loads."""
    path = tmp_path / "accounts"
    add_account(path, "dealer1", Role.DEALER, "deal-the-cards")
    add_account(path, "super1", Role.SUPERVISOR, "pit-boss-ok", pin=PIN, badge=BADGE)
    add_account(path, "super2", Role.SUPERVISOR, "pit-boss-two", badge="04A2-2222-SUP2")
    text = path.read_text()
    assert BADGE not in text and "04A2-2222" not in text
    lines = dict(line.split(":", 1) for line in text.splitlines())
    assert lines["super2"].split(":")[2] == "" and lines["dealer1"].count(":") == 1
    accounts = load_accounts(path)
    assert accounts["super1"].badge_hash and accounts["super1"].badge_hash.startswith("$argon2id$")
    assert accounts["super2"].pin_hash is None and accounts["dealer1"].badge_hash is None
    auth = Authenticator(accounts)
    assert auth.check_badge(BADGE) == accounts["super1"]
    assert auth.check_badge("04A2-2222-SUP2") == accounts["super2"]
    assert auth.check_badge(OTHER_BADGE) is None
    four = tmp_path / "old"
    four.write_text("\n".join(f"{n}:{line}" for n, line in lines.items()
                              if n == "dealer1") + "\n")
    assert load_accounts(four)["dealer1"].badge_hash is None
    six = tmp_path / "six"
    six.write_text(text.splitlines()[1] + ":$argon2id$extra\n")
    with pytest.raises(AccountsError, match="line 1"):
        load_accounts(six)


def test_a_badge_for_another_role_or_of_another_shape_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "accounts"
    with pytest.raises(AccountsError, match="only a supervisor"):
        add_account(path, "dealer1", Role.DEALER, "deal-the-cards", badge=BADGE)
    for bad in ("", "B" * 65, "tab\there", " padded"):
        with pytest.raises(AccountsError, match="printable"):
            add_account(path, "super1", Role.SUPERVISOR, "pit-boss-ok", badge=bad)


def test_unknown_badges_are_throttled(tmp_path: Path) -> None:
    """The PIN's throttle applies per badge: after the free tries even the right badge waits
    when read from the same place again and again wrongly (per address)."""
    path = tmp_path / "accounts"
    add_account(path, "super1", Role.SUPERVISOR, "pit-boss-ok", pin=PIN, badge=BADGE)
    auth = Authenticator(load_accounts(path))
    for _ in range(3):
        assert auth.check_badge(OTHER_BADGE, "127.0.0.1") is None
    assert auth.pin_names.wait("badge " + hashlib.blake2b(
        OTHER_BADGE.encode(), digest_size=16).hexdigest()) > 0
    assert not [k for k in auth.pin_names._strikes if OTHER_BADGE in k]
    assert auth.check_badge(BADGE, "127.0.0.1") is not None


def test_passwd_sets_a_supervisors_badge(tmp_path: Path) -> None:
    """``tablectl web passwd FILE NAME supervisor --pin --badge``: password, PIN, then the
    badge id on stdin (as a reader typing into the terminal sends it); never echoed."""
    path = tmp_path / "accounts"
    made = subprocess.run([sys.executable, "-m", "controller", "web", "passwd", str(path),
                           "super1", "supervisor", "--pin", "--badge"],
                          input=f"pit-boss-ok\n{PIN}\n{BADGE}\n", capture_output=True,
                          text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    assert "with a PIN and a badge" in made.stdout and BADGE not in made.stdout + made.stderr
    auth = Authenticator(load_accounts(path))
    assert auth.check_badge(BADGE) is not None and auth.check_pin("super1", PIN) is not None


# -- config --------------------------------------------------------------------------------------

def test_badge_reader_config(tmp_path: Path) -> None:
    """``web.badge_reader`` is validated like the shoe's HID url and needs accounts;
    ``web.badge_needs_pin`` is a boolean, true by default."""
    accounts = tmp_path / "accounts"
    add_account(accounts, "dealer1", Role.DEALER, "deal-the-cards")
    config = tmp_path / "web.toml"

    def load(body: str) -> Any:
        config.write_text("[web]\n" + body)
        return load_web_config(config)

    good = load(f'accounts = "{accounts}"\nbadge_reader = "usb:1209:5ca1:BADGE01"\n')
    assert good.badge_reader == "usb:1209:5ca1:BADGE01" and good.badge_needs_pin is True
    assert load(f'accounts = "{accounts}"\nbadge_needs_pin = false\n').badge_needs_pin is False
    assert load(f'accounts = "{accounts}"\nbadge_reader = ""\n').badge_reader is None
    for body, message in (
            (f'accounts = "{accounts}"\nbadge_reader = "usb:12zz:5ca1"\n',
             "web.badge_reader: .*hex"),
            (f'accounts = "{accounts}"\nbadge_reader = "/dev/hidraw0"\n',
             "web.badge_reader: USB url"),
            ('badge_reader = "usb:1209:5ca1"\n', "web.badge_reader .*needs|belong"),
            (f'accounts = "{accounts}"\nbadge_needs_pin = "yes"\n', "web.badge_needs_pin")):
        with pytest.raises(WebConfigError, match=message):
            load(body)
    with pytest.raises(DriverConfigError):
        open_badge_reader("usb:nothex:1", Reads().deliver)


# -- the dealer's screen -------------------------------------------------------------------------

def _app(tmp_path: Path, backend: SimUsbBackend, *, needs_pin: bool = True,
         wait: float = WAIT_SECONDS) -> WebApp:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "journal").mkdir(exist_ok=True)
    accounts = tmp_path / "accounts"
    add_account(accounts, "dealer1", Role.DEALER, "deal-the-cards")
    add_account(accounts, "super1", Role.SUPERVISOR, "pit-boss-ok", pin=PIN, badge=BADGE)
    return WebApp(journal_dir=tmp_path / "journal", index_path=tmp_path / "i.sqlite",
                  socket_path=None, key=None, auth=Authenticator(load_accounts(accounts)),
                  local_role=None, poll=3600, badge_reader="usb:1209:5ca1",
                  usb_backend=backend, badge_needs_pin=needs_pin, badge_wait_seconds=wait)


def _login(client: TestClient) -> str:
    answer = client.post("/login", data={"name": "dealer1", "password": "deal-the-cards"},
                         headers=ORIGIN, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', client.get("/dealer").text)
    assert found is not None
    return found.group(1)


@pytest.fixture(name="kiosk")
def kiosk_fixture(tmp_path: Path, backend: SimUsbBackend) -> Iterator[tuple[WebApp, TestClient]]:
    app = _app(tmp_path, backend)
    with TestClient(app.asgi, base_url="http://127.0.0.1", client=KIOSK) as client:
        assert app.badge_reader is not None
        wait_until(lambda: app.badge_reader is not None and app.badge_reader.online,
                   "the kiosk's reader is online")
        yield app, client


def _post_while_typing(app: WebApp, client: TestClient, sim: HidScannerSim, token: str,
                       body: dict[str, Any], badge: str | None) -> Any:
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(client.post, "/dealer/supervisor/badge", json=body,
                              headers={**ORIGIN, "x-csrf-token": token})
        if badge is not None:
            wait_until(lambda: app.badges.waiting, "the screen waits for a badge")
            sim.type_code(badge)
        return pending.result(timeout=WAIT_SECONDS * 2)


def test_a_supervisor_badges_in_while_the_screen_waits(kiosk: tuple[WebApp, TestClient],
                                                       sim: HidScannerSim) -> None:
    """The dialog posts the PIN and waits; the reader types the badge: that supervisor is
    present at this screen. The state tells the kiosk's screen that a reader is there."""
    app, client = kiosk
    token = _login(client)
    assert client.get("/dealer/state").json()["badge"] == {"needs_pin": True, "online": True}
    answer = _post_while_typing(app, client, sim, token, {"pin": PIN}, BADGE)
    assert answer.status_code == 200 and answer.json() == {
        "ok": True, "supervisor": "super1", "expires_in": 120}, answer.text
    assert client.get("/dealer/state").json()["supervisor"]["name"] == "super1"


def test_a_wrong_pin_or_unknown_badge_is_denied(kiosk: tuple[WebApp, TestClient],
                                                sim: HidScannerSim) -> None:
    app, client = kiosk
    token = _login(client)
    for pin, badge in ((PIN, OTHER_BADGE), ("135791", BADGE)):
        answer = _post_while_typing(app, client, sim, token, {"pin": pin}, badge)
        assert answer.json()["error"]["code"] == "denied", answer.text
        assert BADGE not in answer.text
    assert client.get("/dealer/state").json()["supervisor"] is None
    missing = client.post("/dealer/supervisor/badge", json={},
                          headers={**ORIGIN, "x-csrf-token": token})
    assert missing.status_code == 400


def test_a_badge_without_pin_when_the_house_says_so(tmp_path: Path, backend: SimUsbBackend,
                                                    sim: HidScannerSim) -> None:
    app = _app(tmp_path, backend, needs_pin=False)
    with TestClient(app.asgi, base_url="http://127.0.0.1", client=KIOSK) as client:
        wait_until(lambda: app.badge_reader is not None and app.badge_reader.online, "online")
        token = _login(client)
        answer = _post_while_typing(app, client, sim, token, {}, BADGE)
        assert answer.json()["supervisor"] == "super1", answer.text


def test_no_badge_read_in_time_and_not_from_another_machine(
        tmp_path: Path, backend: SimUsbBackend) -> None:
    """No read within the wait: "no_badge". A screen that is not the kiosk's (not loopback)
    may not wait for the kiosk's reader at all, and its state offers no badge."""
    app = _app(tmp_path, backend, wait=0.3)
    with TestClient(app.asgi, base_url="http://127.0.0.1", client=KIOSK) as client:
        token = _login(client)
        answer = client.post("/dealer/supervisor/badge", json={"pin": PIN},
                             headers={**ORIGIN, "x-csrf-token": token})
        assert answer.json()["error"]["code"] == "no_badge"
    app = _app(tmp_path / "away", backend)
    with TestClient(app.asgi, base_url="http://127.0.0.1", client=("192.0.2.7", 4000)) as away:
        token = _login(away)
        assert away.get("/dealer/state").json()["badge"] is None
        refused = away.post("/dealer/supervisor/badge", json={"pin": PIN},
                            headers={**ORIGIN, "x-csrf-token": token})
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "not_kiosk"
        assert app.badges.waiting is False
