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

from playwright.sync_api import Page, expect

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


def money(minor: int) -> str:
    sign = "-" if minor < 0 else ""
    return f"{sign}{abs(minor) // 100:,}.{abs(minor) % 100:02d}"


def chips_moved(result: Mapping[str, Any], amount: int) -> str:
    """What the screen must say a result did with the chips."""
    outcome, net = result["outcome"], result["net"]
    if outcome == "win":
        return f"paid {money(net)}"
    if outcome == "lose":
        return f"taken {money(-net)}"
    if outcome == "returned":
        return f"returned {money(amount)}"
    return f"push: {money(amount)} stays"


def settle_watching(page: Page, service: Service, verb: str = "round.settle"
                    ) -> dict[str, Any]:
    """Tap ``verb`` (settle, or a void's last step) while watching the table: the round's end
    event, as the service journaled it."""
    with service.client() as watcher:
        events = watcher.watch()
        tap_step(page, verb)
        for event in events:
            if event.get("type") in ("RoundSettled", "RoundVoided"):
                return event
    raise AssertionError("the round did not end")


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
