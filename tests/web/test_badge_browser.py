"""The supervisor dialog with the kiosk's badge reader, in Debian's Chromium (Playwright): the
web app in process, served by uvicorn on loopback (the kiosk), its reader a simulated HID badge
reader behind pyusb's backend seam, which types the badge while the dialog waits."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from controller.web.app import WebApp
from controller.web.auth import Authenticator, Role, add_account, load_accounts
from firmware_sim.usb.backend import SimUsbBackend
from firmware_sim.usb.hid_scanner import HidScannerSim
from tests.waiting import wait_until

from .conftest import PASSWORDS, PINS
from .touch import WAIT_MS, touch_page

BADGE = "04A2-77F1-SUP1"


@pytest.fixture(name="kiosk")
def kiosk_fixture(tmp_path: Path) -> Iterator[tuple[str, WebApp, HidScannerSim]]:
    """The app on 127.0.0.1 (a free port), its badge reader online."""
    sim = HidScannerSim(seed=3, serial="BADGE01")
    accounts = tmp_path / "accounts"
    add_account(accounts, "dealer1", Role.DEALER, PASSWORDS["dealer1"])
    add_account(accounts, "super1", Role.SUPERVISOR, PASSWORDS["super1"], pin=PINS["super1"],
                badge=BADGE)
    (tmp_path / "journal").mkdir()
    app = WebApp(journal_dir=tmp_path / "journal", index_path=tmp_path / "i.sqlite",
                 socket_path=None, key=None, auth=Authenticator(load_accounts(accounts)),
                 local_role=None, poll=3600, badge_reader="usb:1209:5ca1:BADGE01",
                 usb_backend=SimUsbBackend([sim]))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(app.asgi, log_config=None, access_log=False,
                                           lifespan="on", timeout_graceful_shutdown=2))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="badge-web")
    thread.start()
    try:
        wait_until(lambda: server.started, "the web app serves")
        wait_until(lambda: app.badge_reader is not None and app.badge_reader.online,
                   "the badge reader is online")
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", app, sim
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()
        sim.close()


def test_a_supervisor_badges_in_on_the_dealers_screen(browser: Any,
                                                      kiosk: tuple[str, WebApp, HidScannerSim]
                                                      ) -> None:
    """The dialog offers the badge on the kiosk; the supervisor keys the PIN, taps "Use my
    badge", the reader types the badge while the screen waits: the supervisor is present, and
    the badge id never reached the page."""
    from playwright.sync_api import expect

    url, app, sim = kiosk
    with touch_page(browser) as page:
        page.goto(url + "/login")
        page.fill("input[name=name]", "dealer1")
        page.fill("input[name=password]", PASSWORDS["dealer1"])
        page.locator("button[type=submit]").tap()
        expect(page).to_have_url(url + "/dealer")
        page.wait_for_function("() => typeof state !== 'undefined' && state.badge !== undefined",
                               timeout=WAIT_MS)
        page.evaluate("() => askSupervisor('A supervisor, please', null)")
        badge_button = page.locator("#supervisor-badge")
        expect(badge_button).to_be_visible(timeout=WAIT_MS)
        badge_button.tap()
        expect(page.locator("#supervisor-problem")).to_contain_text("PIN")
        page.locator("#supervisor-pin").fill(PINS["super1"])
        badge_button.tap()
        expect(page.locator("#supervisor-problem")).to_contain_text("Present your badge")
        wait_until(lambda: app.badges.waiting, "the screen waits for the badge")
        sim.type_code(BADGE)
        expect(page.locator("#supervisor-login")).to_be_hidden(timeout=WAIT_MS)
        expect(page.locator("#supervisor")).to_have_text("Supervisor super1")
        assert BADGE not in page.content()
