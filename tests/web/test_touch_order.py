"""A no-read answered on the card pad at 800x480: a dealing shoe's reader lets a card pass
unread (the simulated shoe, a process of its own, told ``fault noread`` on its stdin), the
table holds (RWS-NC3P 5.17: a supervisor enters the card or voids), and the supervisor taps
the card on the screen's pad (rank by suit), which names the box the card was dealt to and
how many cards are due; the table takes the card into that box and the deal goes on.

This module's ``service`` fixture replaces the bench table of ``conftest.py``: ``tablectl run
--config`` dealing RWS-NC3P from ``python -m firmware_sim shoe --dialect framed`` on a real
pty; the dealer's draws are ``draw`` lines on the shoe's stdin."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from testbed.shift.table import Process, tell
from tests.web.conftest import Service, Web
from tests.web.test_touch_reconstruct import device_table, supervisor_logs_in
from tests.web.touch import (WAIT_MS, drawn, idle, shot, tap_step, tap_watching, touch_page,
                             two_boxes_bet)

SUITS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}


@pytest.fixture(name="table", scope="module")
def table_fixture(workdir: Path) -> Iterator[tuple[Service, Process]]:
    with device_table(workdir, "shoe", 'kind = "shoe"\ndialect = "framed"\nurl = "{url}"',
                      "--dialect", "framed") as table:
        yield table


@pytest.fixture(name="service", scope="module")
def service_fixture(table: tuple[Service, Process]) -> Service:
    return table[0]


def test_a_card_the_reader_missed_is_entered_on_the_card_pad(
        browser: Any, web: Web, table: tuple[Service, Process], tmp_path: Path) -> None:
    """Boxes 1 and 2 bet; the dealer confirms the shuffle by a tap and draws four cards (box
    1, box 2, dealer, box 1); the fifth passes the reader unread and the round holds
    (no_read, RWS-NC3P 5.17). The hold offers "Set the order of the cards"; the supervisor
    logs in by taps and gets the card pad, which says "Box 2: 1 card"; the boxes' cards are
    greyed out (not the dealer's face-down card: the pad does not give it away). A tap on the
    card and Send: the table takes it (``SupervisorDecided`` order, the supervisor named) as
    box 2's second card, and the hold clears."""
    service, shoe = table
    idle(service)
    with touch_page(browser) as page:
        two_boxes_bet(page, web)
        tap_step(page, "round.close")
        tap_step(page, "round.shuffled")
        expect(page.locator("#state")).not_to_have_text("No more bets", timeout=WAIT_MS)
        for _ in range(4):
            tell(shoe, "draw")
        hands = drawn(service, 4)
        assert [len(hands.get(p) or []) for p in ("1", "2", "dealer")] == [2, 1, 1], hands
        tell(shoe, "fault noread")
        tell(shoe, "draw")
        hold = page.locator("#hold")
        expect(hold).to_be_visible(timeout=WAIT_MS)
        assert service.call("round.status")["held_for"] == "no_read (RWS-NC3P 5.17)"
        hold.locator('button[data-verb="supervisor.order"]').tap()
        supervisor_logs_in(page)
        pick = page.locator("#pick")
        expect(pick).to_be_visible()
        expect(page.locator("#pick-what")).to_have_text("Box 2: 1 card, in the order drawn")
        hands = service.call("round.status")["hands"]  # root sees the dealer's hand too
        seen = [c for cards in hands.values() for c in cards]
        for code in hands["1"] + hands["2"]:  # the boxes' cards, face up: greyed out
            expect(pick.locator(f'button.card-key[data-card="{code}"]')).to_be_disabled()
        # the dealer's face-down card is not greyed out: the pad must not give it away
        expect(pick.locator(f'button.card-key[data-card="{hands["dealer"][0]}"]')).to_be_enabled()
        card = next(f"{r}{s}" for s in "SHDC" for r in "AKQJT98765432"
                    if f"{r}{s}" not in seen)
        expect(page.locator("#pick-submit")).to_be_disabled()  # one card is due, none given
        shot(page, "web-touch-order-800x480.png", tmp_path)
        pick.locator(f'button.card-key[data-card="{card}"]').tap()
        expect(page.locator("#pick-chosen .card")).to_have_count(1)
        decided = tap_watching(service, page.locator("#pick-submit"), "SupervisorDecided")[-1]
        assert decided["action"] == "order" and "super1" in str(decided["actor"])
        expect(hold).to_be_hidden(timeout=WAIT_MS)
    after = service.call("round.status")
    assert after["hands"]["2"][1] == card, after["hands"]
    service.call("supervisor.void", {"reason": "test cleanup"})
