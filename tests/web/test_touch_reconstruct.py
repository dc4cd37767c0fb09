"""A reconstruction by taps at 800x480 (RWS-NC3P 5.9): the shuffler dispenses four cards to
box 1 (the simulated machine, a process of its own, told ``fault set4`` on its stdin, as a
faulty machine would), the table holds for the supervisor, and the supervisor rebuilds the
hands on the screen from the cards seen this round: the picker refuses a box left with four
cards before anything is sent, then the fourth card is set aside and the table accepts the
reconstruction and deals on.

This module's ``service`` fixture replaces the bench table of ``conftest.py``: ``tablectl run
--config`` dealing RWS-NC3P from ``python -m firmware_sim shuffler`` on a real pty."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from controller.service.policy import Unsynchronised
from testbed.shift.table import SERVICE_SECTIONS, Process, tell
from testbed.shift.table import device_table as machine_and_service
from tests.web.conftest import PINS, Service, Web
from tests.web.touch import (WAIT_MS, event_of, idle, shot, tap_step, tap_watching,
                             touch_page, two_boxes_bet)

CONFIG = """[table]
id = "WEB-TOUCH"
game = "rws-nc-three-pictures"
boxes = ["1", "2", "3", "4", "5", "6"]

[device]
{device}

[limits.main]
min = 500
max = 100000

""" + SERVICE_SECTIONS


@contextmanager
def device_table(workdir: Path, device: str, section: str, *options: str
                 ) -> Iterator[tuple[Service, Process]]:
    """``python -m firmware_sim DEVICE`` on a real pty (its stdin: ``fault SPEC``, ``draw``)
    and ``tablectl run --config`` dealing RWS-NC3P from it (testbed's
    :func:`testbed.shift.table.device_table`); ``section`` is the ``[device]`` body with
    ``{url}`` for the pty's link, ``options`` the simulator's (``--dialect framed``)."""
    socket_path, journal = workdir / f"{device}.sock", workdir / f"{device}-journal"
    config = CONFIG.format(device=section.format(url=workdir / device), journal=journal,
                           socket=socket_path, unsynchronised=Unsynchronised.ALLOW.value,
                           max_error_ms=100)
    with machine_and_service(workdir, device, options, config) as (machine, table):
        yield Service(socket_path, journal, table.popen), machine


@pytest.fixture(name="table", scope="module")
def table_fixture(workdir: Path) -> Iterator[tuple[Service, Process]]:
    with device_table(workdir, "shuffler", 'kind = "shuffler"\nurl = "{url}"') as table:
        yield table


@pytest.fixture(name="service", scope="module")
def service_fixture(table: tuple[Service, Process]) -> Service:
    return table[0]


def supervisor_logs_in(page: Page) -> None:
    """The supervisor's login at the screen, by taps: the name on the screen's keys (or the
    name's button, where the screen offers the accounts), the PIN on its pad."""
    expect(page.locator("#supervisor-login")).to_be_visible()
    named = page.locator('#supervisor-names button[data-name="super1"]')
    if named.count():
        named.tap()
    else:
        page.locator("#supervisor-name").tap()
        for key in "super1":
            page.locator(f'#name-keys button[data-key="{key}"]').tap()
        page.locator("#supervisor-pin").tap()
    for digit in PINS["super1"]:
        page.locator("#pin-pad button", has_text=digit).tap()
    page.locator("#supervisor-submit").tap()
    expect(page.locator("#supervisor")).to_have_text("Supervisor super1", timeout=WAIT_MS)


def test_the_hands_are_reconstructed_from_the_cards_seen(
        browser: Any, web: Web, table: tuple[Service, Process], tmp_path: Path) -> None:
    """Four cards to box 1 hold the round (RWS-NC3P 5.9: the hand is removed unless the cards
    can be reconstructed). The supervisor taps Reconstruct, logs in by taps, and sees box 1's
    four cards: Send is refused on the screen (a hand is three cards), nothing reaches the
    table; the fourth card tapped and set aside, Send: the table accepts the reconstruction
    (``HandsMoved`` under 5.9, the supervisor named), box 1 keeps the three cards and the deal
    goes on to box 2 and the dealer."""
    service, shuffler = table
    idle(service)
    with touch_page(browser) as page:
        two_boxes_bet(page, web)
        tell(shuffler, "fault set4")
        tap_step(page, "round.close")
        hold = page.locator("#hold")
        expect(hold).to_be_visible(timeout=WAIT_MS)
        status = service.call("round.status")
        assert status["held_for"] == "wrong_count_player (RWS-NC3P 5.9)"
        four = status["hands"]["1"]
        assert len(four) == 4
        hold.locator('button[data-verb="supervisor.reconstruct"]').tap()
        supervisor_logs_in(page)
        pick = page.locator("#pick")
        expect(pick).to_be_visible()
        row = pick.locator('.hand-row[data-position="1"]')
        expect(row.locator("button.held-card")).to_have_count(4)
        page.locator("#pick-submit").tap()
        expect(page.locator("#pick-problem")).to_contain_text("Box 1 has 4 card(s)")
        assert service.call("round.status")["state"] == "hold"  # nothing was sent
        shot(page, "web-touch-reconstruct-800x480.png", tmp_path)
        row.locator(f'button.held-card[data-card="{four[3]}"]').tap()
        pick.locator('button.to[data-box="aside"]').tap()
        expect(row.locator("button.held-card")).to_have_count(3)
        seen = tap_watching(service, page.locator("#pick-submit"), "HandsMoved")
        decided = event_of(seen, "SupervisorDecided")
        assert decided["action"] == "reconstruct" and decided["clause"] == "RWS-NC3P 5.9"
        assert "super1" in str(decided["actor"])
        expect(hold).to_be_hidden(timeout=WAIT_MS)
        expect(page.locator("#state")).to_have_text("Dealt", timeout=WAIT_MS)
    after = service.call("round.status")
    assert after["hands"]["1"] == four[:3]
    assert len(after["hands"]["2"]) == 3 and len(after["hands"]["dealer"]) == 3
    service.call("supervisor.void", {"reason": "test cleanup"})
