"""A dealer runs RWS-3CP rounds on the touch screen by taps alone, on the Pi's 800x480 display:
``tablectl run`` (the bench table: RWS-3CP, a simulated shuffler on a real pty) and
``tablectl web`` as processes, Chromium emulating touch. The screen's buttons send the
control-socket verbs through ``POST /dealer/command`` with the dealer's identity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.web.conftest import PINS, Service, Web
from tests.web.touch import (WAIT_MS, assert_results_on_screen, event_of, idle, log_in, money,
                             place, settle_watching, shot, tap_step, tap_watching, touch_page)


def test_a_whole_three_card_poker_round_by_taps(browser: Any, web: Web, service: Service,
                                                tmp_path: Path) -> None:
    """Open, Ante on three boxes (a seated and a standing player on box 3), No more bets, the
    deal, box 2 folds and boxes 1 and 3 play (RWS-3CP 3.8), reveal, settle: each wager's
    result and amount is on its box, box 2 is marked folded and its Ante taken (3.8.1), and
    the dealer's hand stays card backs until the reveal (3.6)."""
    idle(service)
    with touch_page(browser) as page:
        log_in(page, web, "dealer1")
        tap_step(page, "round.open")
        expect(page.locator("#state")).to_have_text("Place your bets", timeout=WAIT_MS)
        layout = service.call("round.status")["layout"]  # the cloth and limits the screen shows
        assert layout["boxes"] == ["1", "2", "3", "4", "5", "6", "7"]
        ante = layout["limits"]["ante"]
        place(page, "1", [500])
        expect(page.locator('#bets button[data-bet="ante"] .limits')).to_have_text(
            f"{money(ante['min'])}\u2013{money(ante['max'])}")
        place(page, "2", [2500, 500])
        place(page, "3", [10000])
        place(page, "3", [500], player="Standing 1")
        shot(page, "web-dealer-bets-800x480.png", tmp_path)
        # over the table's Ante maximum: the screen says so, the table refuses it
        assert ante["max"] < 50000 + 10000
        page.locator('#wager-boxes button[data-box="1"]').tap()
        for chip in (50000, 10000):
            page.locator(f'#chips button[data-chip="{chip}"]').tap()
        expect(page.locator("#wager-limit")).to_contain_text("outside the limits")
        page.locator("#wager-place").tap()
        expect(page.locator("#answer")).to_contain_text("outside the table limits",
                                                        timeout=WAIT_MS)
        page.locator("#wager-clear").tap()
        # a wager placed by mistake is withdrawn from the box's sheet
        place(page, "1", [500], bet="pair_plus")
        page.locator("#wager-list li.wager", has_text="Pair Plus").locator(
            "button.withdraw").tap()
        expect(page.locator("#box-1 li.wager")).to_have_count(1, timeout=WAIT_MS)
        wagers = service.call("round.status")["wagers"]
        assert sorted((w["position"], w["amount"], w["seated"]) for w in wagers) == [
            ("1", 500, True), ("2", 3000, True), ("3", 500, False), ("3", 10000, True)]
        page.locator("#wager-done").tap()
        tap_step(page, "round.close")
        expect(page.locator("#next")).to_have_text("Ask box 1, 2, 3: play or fold",
                                                    timeout=WAIT_MS)
        dealer_cards = service.call("round.status")["hands"]["dealer"]  # root sees them
        assert len(dealer_cards) == 3 and all(dealer_cards)
        expect(page.locator("#dealer-hand .card.back")).to_have_count(3)
        shot(page, "web-dealer-decide-800x480.png", tmp_path)
        for code in dealer_cards:
            assert f'title="{code}"' not in page.content(), f"face-down {code} on the screen"
        page.locator('#box-2 button[data-choice="fold"]').tap()
        expect(page.locator("#box-2 .mark.fold")).to_have_text("FOLDED", timeout=WAIT_MS)
        page.locator('#box-1 button[data-choice="play"]').tap()
        page.locator('#box-3 button[data-choice="play"]').tap()
        tap_step(page, "round.reveal")
        for code in dealer_cards:
            expect(page.locator(f'#dealer-hand .card[title="{code}"]')).to_have_count(
                1, timeout=WAIT_MS)
        end = settle_watching(page, service)
        expect(page.locator("#state")).to_have_text("Settled", timeout=WAIT_MS)
        assert_results_on_screen(page, service, end)
        expect(page.locator("#box-2 li.wager .result")).to_have_text("taken 30.00")
        expect(page.locator("#box-2")).to_have_class("box folded")
        expect(page.locator("#box-3 .who", has_text="Standing 1")).to_have_count(1)
        expect(page.locator('#actions button[data-verb="round.open"]')).to_be_visible()
        shot(page, "web-dealer-800x480.png", tmp_path)
        page.set_viewport_size({"width": 1280, "height": 720})
        shot(page, "web-dealer-1280x720.png", tmp_path)
        page.set_viewport_size({"width": 1920, "height": 1080})
        shot(page, "web-dealer-1920x1080.png", tmp_path)


def test_a_voided_round_shows_every_stake_returned(browser: Any, web: Web, service: Service,
                                                   tmp_path: Path) -> None:
    """A round voided after the deal returns every wager: the supervisor taps Void on the
    dealer's screen, logs in there (name, PIN on the pad), picks a reason; the journal names
    the supervisor, and the screen says ``returned`` with each wager's own amount, never 0.00."""
    idle(service)
    with touch_page(browser) as page:
        log_in(page, web, "dealer1")
        tap_step(page, "round.open")
        place(page, "4", [2500])
        place(page, "5", [500, 100, 100], bet="ante")
        place(page, "5", [500], bet="pair_plus")
        page.locator("#wager-done").tap()
        tap_step(page, "round.close")
        expect(page.locator("#next")).to_contain_text("play or fold", timeout=WAIT_MS)
        page.locator('#void-row button[data-verb="supervisor.void"]').tap()
        login = page.locator("#supervisor-login")
        expect(login).to_be_visible()
        page.locator("#supervisor-name").fill("super1")
        for digit in PINS["super1"]:
            page.locator("#pin-pad button", has_text=digit).tap()
        page.locator("#supervisor-submit").tap()
        expect(page.locator("#supervisor")).to_have_text("Supervisor super1", timeout=WAIT_MS)
        page.locator("#ask-presets button", has_text="Deck count wrong").tap()
        seen = tap_watching(service, page.locator("#ask-submit"), "RoundVoided")
        decided = event_of(seen, "SupervisorDecided")
        assert "super1" in str(decided.get("actor")) and decided["reason"] == "Deck count wrong"
        expect(page.locator("#state")).to_have_text("Round void", timeout=WAIT_MS)
        expect(page.locator("#round-note")).to_contain_text("every wager is returned")
        assert_results_on_screen(page, service, seen[-1])
        returned = page.locator("#boxes li.wager .result.returned")
        expect(returned).to_have_count(3)
        assert sorted(returned.all_inner_texts()) == sorted(
            f"returned {money(a)}" for a in (2500, 700, 500))
        shot(page, "web-dealer-void-800x480.png", tmp_path)


def test_a_hold_is_answered_on_the_screen_by_a_supervisor(browser: Any, web: Web,
                                                          service: Service) -> None:
    """An exposed card holds the round (RWS-3CP: the supervisor decides): the screen says so in
    words with the buttons that answer it; the dealer taps Continue, the supervisor logs in
    there with the PIN, the hold clears and the round goes on to the decisions."""
    idle(service)
    with touch_page(browser) as page:
        log_in(page, web, "dealer1")
        tap_step(page, "round.open")
        place(page, "6", [2500])
        page.locator("#wager-done").tap()
        tap_step(page, "round.close")
        expect(page.locator("#next")).to_contain_text("play or fold", timeout=WAIT_MS)
        service.call("irregularity.report", {"kind": "exposed_card", "position": "6"})
        hold = page.locator("#hold")
        expect(hold).to_be_visible(timeout=WAIT_MS)
        # the report names the box (issue 36), once its event has reached the screen
        expect(page.locator("#hold-title")).to_have_text("A card was exposed at box 6",
                                                         timeout=WAIT_MS)
        assert "tablectl" not in hold.inner_text() and "_" not in hold.inner_text()
        expect(page.locator("#actions button")).to_have_count(0)
        hold.locator('button[data-verb="supervisor.continue"]').tap()
        expect(page.locator("#supervisor-login")).to_be_visible()
        page.locator("#supervisor-name").fill("super1")
        page.locator("#supervisor-pin").fill(PINS["super1"])
        page.locator("#supervisor-submit").tap()
        expect(hold).to_be_hidden(timeout=WAIT_MS)
        expect(page.locator("#next")).to_have_text("Ask box 6: play or fold")
        expect(page.locator('#box-6 button[data-choice="fold"]')).to_be_visible()


GHOST_TAP = """() => {
  window.ghost = null;
  new MutationObserver(() => {
    const close = document.querySelector('#actions button[data-verb="round.close"]');
    if (close && window.ghost === null) { window.ghost = close.disabled; close.click(); }
  }).observe(document.getElementById("actions"), { childList: true });
}"""
"""A second tap that lands on "No more bets" the moment it is drawn where "Open the round"
was: a click on the new button as soon as it is in the page (no person is faster)."""


def test_a_double_tap_on_open_does_not_close_betting(browser: Any, web: Web,
                                                     service: Service) -> None:
    """Issue 36, seen in the shift by taps: "No more bets" is drawn where "Open the round" was,
    so a double tap opened the round and closed betting before anyone bet. The table's new
    buttons take no tap for a moment: the second tap is lost, betting stays open, and the
    button takes a tap once it has settled."""
    idle(service)
    with touch_page(browser) as page:
        log_in(page, web, "dealer1")
        page.evaluate(GHOST_TAP)
        tap_step(page, "round.open")
        expect(page.locator("#state")).to_have_text("Place your bets", timeout=WAIT_MS)
        page.wait_for_function("() => window.ghost !== null", timeout=WAIT_MS)
        assert page.evaluate("window.ghost") is True  # drawn not taking taps
        close = page.locator('#actions button[data-verb="round.close"]')
        expect(close).to_be_enabled(timeout=WAIT_MS)
        assert service.call("round.status")["state"] == "betting"
        expect(page.locator("#state")).to_have_text("Place your bets")
        close.tap()  # settled: a tap now is the dealer's
        expect(page.locator("#state")).not_to_have_text("Place your bets", timeout=WAIT_MS)


ORDER_SEEN = """() => {
  window.seen = [];
  const state = document.getElementById("state");
  new MutationObserver(() => window.seen.push("state:" + state.textContent))
    .observe(state, { childList: true, characterData: true, subtree: true });
  new MutationObserver(() => window.seen.push(
    document.body.classList.contains("sending") ? "busy" : "ready"))
    .observe(document.body, { attributes: true, attributeFilter: ["class"] });
}"""
"""What the page showed, in order: the round's state line, and the page busy or ready."""
SLOW_STREAM = """(() => {
  const Real = window.EventSource;
  window.EventSource = function (url) {
    const source = new Real(url);
    const late = { onmessage: null, onerror: null, close: () => source.close() };
    source.onmessage = (m) => setTimeout(() => late.onmessage && late.onmessage(m), 300);
    source.onerror = (e) => late.onerror && late.onerror(e);
    return late;
  };
})();"""
"""The table's views 300 ms late, as on a loaded machine: the command's answer comes first."""


def test_the_page_is_busy_until_the_view_after_a_command_is_drawn(browser: Any, web: Web,
                                                                   service: Service) -> None:
    """Issue 36, seen in the shift by taps: between a command's answer and the table's next
    view the screen showed the view from before it, ready for taps, and a hold already
    answered was answered again. The page is busy from the tap until the view after the
    command is drawn: "Place your bets" is on the screen before the page is ready again,
    with the views arriving late (on a quiet machine the view comes before the answer)."""
    idle(service)
    with touch_page(browser) as page:
        page.add_init_script(SLOW_STREAM)
        log_in(page, web, "dealer1")
        page.evaluate(ORDER_SEEN)
        tap_step(page, "round.open")
        expect(page.locator("#state")).to_have_text("Place your bets", timeout=WAIT_MS)
        expect(page.locator("body.sending")).to_have_count(0, timeout=WAIT_MS)
        seen = page.evaluate("window.seen")
        assert "busy" in seen, seen
        busy = seen.index("busy")
        shown = seen.index("state:Place your bets", busy)
        assert "ready" in seen[shown:] and "ready" not in seen[busy:shown], seen
