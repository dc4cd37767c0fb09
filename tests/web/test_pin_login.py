"""The dealer's login by taps at the kiosk (issue 36: no keyboard anywhere in the shift): the
accounts file gives the dealer a PIN (``tablectl web passwd --pin``), the kiosk's login page
offers the dealers with a PIN as buttons and a PIN pad, and the PIN opens a dealer's session.
A dealer's PIN never answers a hold (that is a supervisor's), a supervisor's PIN never opens a
session, and only the kiosk (a loopback client) is offered the names or may use a PIN.

Accounts hold cheap Argon2 hashes, as in ``test_throttle_kiosk``; the browser test uses the
real accounts file and ``tablectl web``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from playwright.sync_api import expect
from starlette.testclient import TestClient

from controller.web.app import WebApp
from controller.web.auth import (
    FREE_PIN_FAILURES,
    Account,
    Authenticator,
    Role,
    add_account,
    load_accounts,
)
from controller.web.errors import AccountsError
from tests.web.conftest import PASSWORDS, Web
from tests.web.touch import WAIT_MS, shot, touch_page

CHEAP = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
KIOSK = ("127.0.0.1", 50000)
AWAY = ("192.0.2.7", 50000)
DEALER_PIN = "305817"
SUPERVISOR_PIN = "472193"


@pytest.fixture(name="auth")
def auth_fixture() -> Authenticator:
    return Authenticator({
        "dealer1": Account("dealer1", Role.DEALER, CHEAP.hash("deal-the-cards"),
                           CHEAP.hash(DEALER_PIN)),
        "dealer2": Account("dealer2", Role.DEALER, CHEAP.hash("shuffle-up")),
        "super1": Account("super1", Role.SUPERVISOR, CHEAP.hash("pit-boss-ok"),
                          CHEAP.hash(SUPERVISOR_PIN)),
    })


def test_a_dealers_pin_opens_a_dealers_session_and_nothing_else(auth: Authenticator) -> None:
    """The dealer's PIN logs the dealer in; it does not answer a hold as a supervisor; the
    supervisor's PIN does not open a session; a dealer without a PIN is not offered."""
    token = auth.login_pin("dealer1", DEALER_PIN, KIOSK[0])
    assert token is not None
    session = auth.session(token)
    assert session is not None and session.role is Role.DEALER and session.name == "dealer1"
    assert auth.check_pin("dealer1", DEALER_PIN, KIOSK[0]) is None
    assert auth.login_pin("super1", SUPERVISOR_PIN, KIOSK[0]) is None
    assert auth.login_pin("dealer1", "000000", KIOSK[0]) is None
    assert auth.pin_dealers() == ["dealer1"]


def test_wrong_pins_back_off_with_the_pin_throttle(auth: Authenticator) -> None:
    """A PIN is short: after the PIN's free failures for the name, even the right PIN waits."""
    for _ in range(FREE_PIN_FAILURES):
        assert auth.login_pin("dealer1", "000000", KIOSK[0]) is None
    assert auth.login_pin("dealer1", DEALER_PIN, KIOSK[0]) is None
    assert auth.pins.names.wait("dealer1") > 0


def test_the_accounts_file_gives_a_dealer_a_pin_and_no_other_role(tmp_path: Path) -> None:
    """``passwd --pin`` for a dealer is kept; surveillance still has none (a clear error)."""
    path = tmp_path / "accounts"
    add_account(path, "dealer1", Role.DEALER, "deal-the-cards", pin=DEALER_PIN)
    assert load_accounts(path)["dealer1"].pin_hash
    with pytest.raises(AccountsError, match="only a supervisor or a dealer"):
        add_account(path, "surv1", Role.SURVEILLANCE, "watch-the-table", pin=DEALER_PIN)


@pytest.fixture(name="app")
def app_fixture(tmp_path: Path, auth: Authenticator) -> WebApp:
    (tmp_path / "journal").mkdir()
    return WebApp(journal_dir=tmp_path / "journal", index_path=tmp_path / "i.sqlite",
                  socket_path=tmp_path / "no-table.sock", key=None, auth=auth,
                  local_role=None, poll=3600)


@pytest.fixture(name="kiosk")
def kiosk_fixture(app: WebApp) -> Iterator[TestClient]:
    with TestClient(app.asgi, base_url="http://127.0.0.1", client=KIOSK,
                    follow_redirects=False) as client:
        yield client


def test_the_kiosk_lists_the_dealers_with_a_pin_and_takes_the_pin(kiosk: TestClient) -> None:
    """At the kiosk the page offers dealer1 (who has a PIN), not dealer2 or the supervisor;
    the name and PIN log in to the dealer's screen; a wrong PIN says so."""
    page = kiosk.get("/login").text
    assert 'data-name="dealer1"' in page and 'id="login-pad"' in page
    assert 'data-name="dealer2"' not in page and 'data-name="super1"' not in page
    origin = {"origin": "http://127.0.0.1"}
    wrong = kiosk.post("/login", data={"name": "dealer1", "pin": "000000"}, headers=origin)
    assert wrong.status_code == 401 and "Wrong name or PIN" in wrong.text
    good = kiosk.post("/login", data={"name": "dealer1", "pin": DEALER_PIN}, headers=origin)
    assert good.status_code == 303
    assert kiosk.get("/dealer/state").status_code == 200


def test_away_from_the_kiosk_no_names_and_no_pin(app: WebApp) -> None:
    """Another address gets the password form alone, and a PIN is refused there even when
    right: the names and the short secret are for the table's own screen."""
    with TestClient(app.asgi, client=AWAY, follow_redirects=False) as away:
        assert 'data-name="dealer1"' not in away.get("/login").text
        refused = away.post("/login", data={"name": "dealer1", "pin": DEALER_PIN},
                            headers={"origin": "http://testserver"})
        assert refused.status_code == 403 and "only at the table" in refused.text


@pytest.fixture(name="accounts", scope="module")
def accounts_fixture(workdir: Path) -> Path:
    """This module's ``tablectl web`` reads a dealer with a PIN (``conftest``'s has none)."""
    path = workdir / "accounts"
    add_account(path, "dealer1", Role.DEALER, PASSWORDS["dealer1"], pin=DEALER_PIN)
    return path


def test_the_dealer_logs_in_by_taps(browser: Any, web: Web, tmp_path: Path) -> None:
    """Chromium at 800x480, touch: the dealer's name, six digits on the pad, Log in: the
    dealer's screen, no keyboard."""
    with touch_page(browser) as page:
        page.goto(web.url + "/login")
        page.locator('#login-names label[data-name="dealer1"]').tap()
        for digit in DEALER_PIN:
            page.locator("#login-pad button", has_text=digit).tap()
        expect(page.locator("#login-pin")).to_have_value(DEALER_PIN)
        shot(page, "web-login-pin-800x480.png", tmp_path)
        page.locator("#login-pin-submit").tap()
        expect(page).to_have_url(web.url + "/dealer", timeout=WAIT_MS)
