"""The dealer's touch screen as the people at the table use it: taps only.

A touch-emulating Chromium at the Pi's 800x480 (Playwright ``tap()``), Debian's own browser
(``/usr/bin/chromium``, never a download). The dealer logs in once (their name's button and
their PIN on the login page's pad); a supervisor comes to the table for each irregularity, logs
in on that screen (name and PIN on the screen's pad), answers with the buttons the table
offers, and logs out. Every tap is counted.

The page drops a tap while its previous command is still in flight (``body.sending``), as a
person's double tap; so each tap that sends waits for the page to be ready again, then for the
effect on the screen, with a bound.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import Locator, Page, expect

from testbed.shift.table import DEALER, DEALER_PIN, PIN, SUPERVISOR

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
PI_SCREEN = {"width": 800, "height": 480}
WAIT_MS = 30_000
"""Bound on one effect reaching the screen (milliseconds normally; a loaded CI box is slow)."""
_MONEY = re.compile(r"^(paid|taken|returned|push:) (-?[\d,]+\.\d\d)")


def money(minor: int) -> str:
    sign = "-" if minor < 0 else ""
    return f"{sign}{abs(minor) // 100:,}.{abs(minor) % 100:02d}"


def shown_net(text: str) -> int:
    """What a result on the screen says the chips did, in minor units: ``paid 5.00`` +500,
    ``taken 30.00`` -3000, a push or a return 0."""
    found = _MONEY.match(text)
    if found is None:
        raise ValueError(f"not a result: {text!r}")
    minor = int(found.group(2).replace(",", "").replace(".", ""))
    return {"paid": minor, "taken": -minor}.get(found.group(1), 0)


@dataclass(frozen=True, slots=True)
class ShownResult:
    """One wager's result as the screen showed it when its round ended."""

    round: str
    wager_id: str
    text: str
    amount_text: str


@dataclass
class DealerScreen:
    """The page, and what the people did on it."""

    page: Page
    taps: int = 0
    supervisor_logins: int = 0
    supervisor_taps: list[str] = field(default_factory=list)
    """The supervisor's verbs, in the order tapped."""

    # -- taps ------------------------------------------------------------------------------
    def tap(self, target: Locator) -> None:
        expect(target).to_be_visible(timeout=WAIT_MS)
        target.tap()
        self.taps += 1

    def settled(self) -> None:
        """The page's command is answered (a tap meanwhile would be dropped)."""
        expect(self.page.locator("body.sending")).to_have_count(0, timeout=WAIT_MS)

    def step(self, verb: str) -> None:
        """The round's next-step button for ``verb``: there only when ``waits`` offers it."""
        self.tap(self.page.locator(f'#actions button[data-verb="{verb}"]'))
        self.settled()

    # -- dealer ----------------------------------------------------------------------------
    def log_in(self, url: str) -> None:
        """The kiosk's login by taps: the dealer's name, their PIN on the pad, Log in."""
        page = self.page
        page.goto(url + "/login")
        self.tap(page.locator(f'#login-names label[data-name="{DEALER}"]'))
        for digit in DEALER_PIN:
            self.tap(page.locator("#login-pad button", has_text=digit))
        self.tap(page.locator("#login-pin-submit"))
        expect(page).to_have_url(url + "/dealer", timeout=WAIT_MS)

    def open_round(self) -> str:
        self.step("round.open")
        expect(self.page.locator("#state")).to_have_text("Place your bets", timeout=WAIT_MS)
        return self.page.locator("#round").inner_text().removeprefix("Round ").strip()

    def place(self, box: str, chips: list[int], *, bet: str | None = None,
              player: str | None = None) -> None:
        """Bet at ``box``: the box, the player, the bet, the chips, Place; waits until the
        wager shows on the box."""
        page = self.page
        panel = page.locator("#wager-panel")
        before = page.locator(f"#box-{box} li.wager").count()
        if panel.is_visible():
            self.tap(page.locator(f'#wager-boxes button[data-box="{box}"]'))
        else:
            self.tap(page.locator(f"#box-{box}"))
        expect(panel).to_be_visible(timeout=WAIT_MS)
        if player is not None:
            self.tap(page.locator("#players button", has_text=player))
        if bet is not None:
            self.tap(page.locator(f'#bets button[data-bet="{bet}"]'))
        for chip in chips:
            self.tap(page.locator(f'#chips button[data-chip="{chip}"]'))
        expect(page.locator("#pending")).to_have_text(money(sum(chips)), timeout=WAIT_MS)
        self.tap(page.locator("#wager-place"))
        self.settled()
        expect(page.locator(f"#box-{box} li.wager")).to_have_count(before + 1, timeout=WAIT_MS)

    def done_betting(self) -> None:
        self.tap(self.page.locator("#wager-done"))
        expect(self.page.locator("#wager-panel")).to_be_hidden(timeout=WAIT_MS)

    def decide(self, box: str, choice: str) -> None:
        """Play or Fold on the box (RWS-3CP 3.8), then its mark on the box."""
        self.tap(self.page.locator(f'#box-{box} button[data-choice="{choice}"]'))
        self.settled()
        mark = "fold" if choice == "fold" else "play"
        expect(self.page.locator(f"#box-{box} .mark.{mark}")).to_have_count(1, timeout=WAIT_MS)

    def wait_state(self, words: str) -> None:
        expect(self.page.locator("#state")).to_have_text(words, timeout=WAIT_MS)

    def results(self, round_id: str, placed: int) -> list[ShownResult]:
        """Every wager's result on the screen once the round ended: the ``placed`` ones and
        those the table placed itself (a box's Play, RWS-3CP 3.8), each showing one."""
        rows = self.page.locator("#boxes li.wager")
        expect(self.page.locator("#boxes li.wager:not(:has(.result))")).to_have_count(
            0, timeout=WAIT_MS)
        count = rows.count()
        if count < placed:
            raise AssertionError(f"round {round_id}: {count} wager(s) on the screen, "
                                 f"{placed} placed")
        shown = []
        for index in range(count):
            row = rows.nth(index)
            shown.append(ShownResult(round_id, str(row.get_attribute("data-wager")),
                                     row.locator(".result").inner_text().strip(),
                                     row.locator(".amount").inner_text().strip()))
        return shown

    # -- supervisor ------------------------------------------------------------------------
    def supervisor_answers(self, verb: str) -> None:
        """A supervisor's button (on the hold, or the table's next step): the first one asks
        a supervisor to log in at the table; the command then acts as them."""
        page = self.page
        button = page.locator(f'#hold-buttons button[data-verb="{verb}"], '
                              f'#actions button[data-verb="{verb}"]')
        self.tap(button.first)
        login = page.locator("#supervisor-login")
        if login.is_visible():
            page.locator("#supervisor-name").fill(SUPERVISOR)  # the kiosk's keyboard
            for digit in PIN:
                self.tap(page.locator("#pin-pad button", has_text=digit))
            self.tap(page.locator("#supervisor-submit"))
            expect(page.locator("#supervisor")).to_have_text(f"Supervisor {SUPERVISOR}",
                                                             timeout=WAIT_MS)
            self.supervisor_logins += 1
        self.settled()
        expect(page.locator("#answer.bad")).to_have_count(0)
        self.supervisor_taps.append(verb)

    def supervisor_leaves(self) -> None:
        self.tap(self.page.locator("#supervisor-logout"))
        expect(self.page.locator("#supervisor")).to_be_hidden(timeout=WAIT_MS)


@contextmanager
def dealer_screen(browser: Any, viewport: Mapping[str, int] = PI_SCREEN
                  ) -> Iterator[DealerScreen]:
    context = browser.new_context(viewport=dict(viewport), has_touch=True, is_mobile=False)
    try:
        yield DealerScreen(context.new_page())
    finally:
        context.close()


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium under Playwright, headless."""
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()
