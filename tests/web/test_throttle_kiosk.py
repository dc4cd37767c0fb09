"""The login throttle at a shared kiosk (issue 36): every kiosk user is one address, so a
guesser spraying names there must be slowed without locking out the real dealer
(``LoginThrottle``, docs/web.md "Login throttle").

Accounts hold cheap Argon2 hashes, as in ``test_limits``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from starlette.testclient import TestClient

from controller.web.app import WebApp
from controller.web.auth import (FREE_ADDRESS_FAILURES, FREE_FAILURES, Account, Authenticator,
                                 Role)
from controller.web.throttle import Backoff, LoginThrottle
from testbed.journalgen import write_synthetic_journal

CHEAP = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
ORIGIN = "http://testserver"
KIOSK = "127.0.0.1"


def _accounts(*people: tuple[str, Role, str]) -> dict[str, Account]:
    return {name: Account(name, role, CHEAP.hash(password)) for name, role, password in people}


@pytest.fixture(name="auth")
def auth_fixture() -> Authenticator:
    return Authenticator(_accounts(("dealer1", Role.DEALER, "deal-the-cards"),
                                   ("dealer2", Role.DEALER, "shuffle-up"),
                                   ("surv1", Role.SURVEILLANCE, "watch-the-table")))


def _spray(auth: Authenticator, count: int = FREE_ADDRESS_FAILURES) -> None:
    for i in range(count):
        assert auth.login(f"guess{i}", "wrong", KIOSK) is None


def test_twenty_names_from_the_kiosk_do_not_lock_out_the_real_dealer(
        auth: Authenticator) -> None:
    """The issue's attack: 20 failures under 20 names from 127.0.0.1. The attacker's further
    guesses are refused (new names, names already tried) while the real dealer, whose name has
    not failed, logs in at once from the same address."""
    _spray(auth)
    assert auth.logins.addresses.wait(KIOSK) > 0
    assert auth.logins.wait("guess20", KIOSK, known=False) > 0
    assert auth.logins.wait("guess3", KIOSK, known=False) > 0
    assert auth.login("dealer1", "deal-the-cards", KIOSK) is not None
    assert auth.login("surv1", "watch-the-table", KIOSK) is not None


def test_a_spray_over_real_names_costs_one_try_per_account(auth: Authenticator) -> None:
    """At a hot address each account can be tried once outside the address's wait; after its
    failure there it waits as the address does, even with the right password. Another account,
    not tried from there, still gets in."""
    _spray(auth)
    assert auth.login("dealer2", "guess", KIOSK) is None  # tried: a real verification
    assert auth.logins.pairs.has(f"{KIOSK}\ndealer2")
    assert auth.logins.wait("dealer2", KIOSK, known=True) > 0
    assert auth.login("dealer2", "shuffle-up", KIOSK) is None  # waits by the address now
    assert auth.login("dealer1", "deal-the-cards", KIOSK) is not None


def test_a_name_is_slowed_after_its_failures_from_any_address(auth: Authenticator) -> None:
    """A name is slowed after ``FREE_FAILURES`` failures whatever the addresses: guessing one
    account from many addresses gains nothing."""
    for i in range(FREE_FAILURES):
        assert auth.login("dealer1", "wrong", f"10.0.0.{i}") is None
    assert auth.login("dealer1", "deal-the-cards", "10.0.1.1") is None
    assert auth.login("dealer2", "shuffle-up", "10.0.1.1") is not None


def test_the_spray_stays_slowed_and_the_backoff_doubles() -> None:
    """After the address's wait a spray gets one more try, then waits twice as long; a good
    login of a clean account does not reset the address's count."""
    now = [0.0]
    throttle = LoginThrottle(Backoff(free=5), Backoff(free=20), "test", clock=lambda: now[0])
    for i in range(20):
        assert throttle.wait(f"n{i}", KIOSK, known=False) == 0.0
        throttle.failed(f"n{i}", KIOSK)
    assert throttle.wait("n20", KIOSK, known=False) == pytest.approx(2.0)
    assert throttle.wait("dealer1", KIOSK, known=True) == 0.0
    throttle.succeeded("dealer1", KIOSK)
    now[0] = 2.0
    assert throttle.wait("n20", KIOSK, known=False) == 0.0
    throttle.failed("n20", KIOSK)
    assert throttle.wait("n21", KIOSK, known=False) == pytest.approx(4.0)


def test_a_pin_spray_does_not_lock_out_the_supervisor() -> None:
    """The supervisor's PIN has the same scheme with its own tables."""
    hashed = CHEAP.hash("pw")
    auth = Authenticator({"sup1": Account("sup1", Role.SUPERVISOR, hashed, CHEAP.hash("135790"))})
    for i in range(FREE_ADDRESS_FAILURES):
        assert auth.check_pin(f"guess{i}", "000000", KIOSK) is None
    assert auth.check_pin("guess99", "000000", KIOSK) is None
    assert auth.pins.wait("guess99", KIOSK, known=False) > 0
    assert auth.check_pin("sup1", "135790", KIOSK) is not None


@pytest.fixture(name="client")
def client_fixture(tmp_path: Path, auth: Authenticator) -> Iterator[TestClient]:
    journal = tmp_path / "journal"
    write_synthetic_journal(journal, 2)
    app = WebApp(journal_dir=journal, index_path=tmp_path / "i.sqlite",
                 socket_path=tmp_path / "no-table.sock", key=None, auth=auth,
                 local_role=None, poll=3600)
    with TestClient(app.asgi, follow_redirects=False) as client:
        yield client


def test_the_kiosk_attack_through_the_login_form(client: TestClient) -> None:
    """Through ``POST /login`` (one client address, as at a kiosk): 20 wrong names, then the
    attacker's 21st name is refused while the real dealer's login succeeds at once."""
    def login(name: str, password: str) -> int:
        return client.post("/login", data={"name": name, "password": password},
                           headers={"origin": ORIGIN}).status_code

    for i in range(FREE_ADDRESS_FAILURES):
        assert login(f"guess{i}", "wrong") != 303
    assert login("guess20", "wrong") != 303
    assert login("dealer1", "deal-the-cards") == 303
    assert client.get("/dealer/state").status_code == 200
