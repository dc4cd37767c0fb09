"""Driving the dealer's touch screen as a dealer does: taps only (Playwright ``tap()`` in a
touch-emulating Chromium context), reading back what the screen says.

Shared by the touch tests of each game; every wait is a Playwright expectation with a bound.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, expect

from testbed.shift.audit import chips_moved
from testbed.shift.screen import money
from tests.web.conftest import PASSWORDS, Service, Web

WAIT_MS = 15_000
DOCS = Path(__file__).resolve().parents[2] / "docs"
PI_SCREEN = {"width": 800, "height": 480}
"""The Raspberry Pi's official 7" touch display, the kiosk's own screen."""


@contextmanager
def touch_page(browser: Any, viewport: Mapping[str, int] = PI_SCREEN) -> Iterator[Page]:
    context = browser.new_context(viewport=dict(viewport), has_touch=True, is_mobile=False)
    try:
        yield context.new_page()
    finally:
        context.close()


def log_in(page: Page, web: Web, name: str) -> None:
    page.goto(web.url + "/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORDS[name])
    page.locator("button[type=submit]").tap()
    expect(page).to_have_url(web.url + "/dealer")


def two_boxes_bet(page: Page, web: Web) -> None:
    """The dealer logs in, opens a round, boxes 1 and 2 bet 10.00 each by chips, and the
    wager sheet is closed: the start of the single-round touch tests."""
    log_in(page, web, "dealer1")
    tap_step(page, "round.open")
    place(page, "1", [500, 500])
    place(page, "2", [500, 500])
    page.locator("#wager-done").tap()


def shot(page: Page, name: str, tmp_path: Path) -> None:
    """A screenshot for the docs when ``TABLECTL_SCREENSHOTS=1``, else thrown away."""
    target = DOCS if os.environ.get("TABLECTL_SCREENSHOTS") == "1" else tmp_path
    page.screenshot(path=str(target / name))


def idle(service: Service) -> None:
    """Each test starts between rounds: a round left open by another is voided."""
    if service.call("round.status")["state"] not in ("idle", "settled", "voided"):
        service.call("supervisor.void", {"reason": "test cleanup"})


def tap_step(page: Page, verb: str) -> None:
    """Tap the round's next-step button for ``verb`` (it is there only when ``waits`` offers
    it: waiting for it is waiting for the table to be ready for it)."""
    button = page.locator(f'#actions button[data-verb="{verb}"]')
    expect(button).to_be_visible(timeout=WAIT_MS)
    button.tap()


def place(page: Page, box: str, chips: list[int], *, bet: str | None = None,
          player: str | None = None) -> None:
    """Bet at ``box`` by taps: the box, the player (``Seated``, ``Standing 1``...), the bet,
    the chips, Place; waits until the wager shows on the box."""
    panel = page.locator("#wager-panel")
    before = page.locator(f"#box-{box} li.wager").count()
    if panel.is_visible():
        page.locator(f'#wager-boxes button[data-box="{box}"]').tap()
    else:
        page.locator(f"#box-{box}").tap()
    expect(panel).to_be_visible(timeout=WAIT_MS)
    if player is not None:
        page.locator("#players button", has_text=player).tap()
    if bet is not None:
        page.locator(f'#bets button[data-bet="{bet}"]').tap()
    for chip in chips:
        page.locator(f'#chips button[data-chip="{chip}"]').tap()
    expect(page.locator("#pending")).to_have_text(money(sum(chips)))
    page.locator("#wager-place").tap()
    expect(page.locator(f"#box-{box} li.wager")).to_have_count(before + 1, timeout=WAIT_MS)
    expect(page.locator("#pending")).to_have_text("0.00")


def tap_watching(service: Service, target: Locator, *until: str) -> list[dict[str, Any]]:
    """Tap ``target`` while watching the table (a ``watch`` connection, bounded by its
    timeout): the events that followed, up to and including the first of a type in
    ``until``."""
    seen: list[dict[str, Any]] = []
    with service.client() as watcher:
        events = watcher.watch()
        target.tap()
        for event in events:
            seen.append(event)
            if event.get("type") in until:
                return seen
    raise AssertionError(f"no {' or '.join(until)} after the tap: {seen[-5:]}")


def event_of(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """The first event of type ``kind`` among ``events``."""
    found = next((e for e in events if e.get("type") == kind), None)
    assert found is not None, f"no {kind} among {[e.get('type') for e in events]}"
    return found


def settle_watching(page: Page, service: Service, verb: str = "round.settle"
                    ) -> dict[str, Any]:
    """Tap ``verb`` (settle, or a void's last step) while watching the table: the round's end
    event, as the service journaled it."""
    button = page.locator(f'#actions button[data-verb="{verb}"]')
    expect(button).to_be_visible(timeout=WAIT_MS)
    return tap_watching(service, button, "RoundSettled", "RoundVoided")[-1]


def assert_results_on_screen(page: Page, service: Service, end: Mapping[str, Any]) -> None:
    """Every wager of the round shows its own result on its box: paid, taken, returned."""
    wagers = {w["id"]: w for w in service.call("round.status")["wagers"]}
    results = end["settlement"]["results"]
    assert {r["wager_id"] for r in results} == set(wagers)
    for result in results:
        wager = wagers[result["wager_id"]]
        shown = page.locator(f'#box-{wager["position"]} li.wager'
                             f'[data-wager="{result["wager_id"]}"] .result')
        expect(shown).to_have_text(chips_moved(result, wager["amount"]), timeout=WAIT_MS)


def drawn(service: Service, count: int) -> dict[str, list[Any]]:
    """Wait (on a ``watch`` connection, bounded by its timeout) until the table has taken
    ``count`` cards of the deal, or held; the hands as they stand."""
    with service.client() as watcher:
        events = watcher.watch()
        hands = service.call("round.status")["hands"]
        if sum(len(c) for c in hands.values()) >= count:
            return hands
        for event in events:
            status = service.call("round.status")
            if status["state"] == "hold" or \
                    sum(len(c) for c in status["hands"].values()) >= count:
                return status["hands"]
    raise AssertionError("the shoe's cards did not arrive")
