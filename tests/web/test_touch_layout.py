"""The dealer's screen laid out for the Pi's 800x480 display first (issue 36), measured in
Chromium: for a round on all 7 boxes of RWS-3CP, with a seated and a standing player and
Pair Plus on some boxes, the next step, the hold and its buttons, every box's cards and
amounts are on the screen without scrolling; nothing is cut off at the screen's edge or by its
own box, nothing overlaps; the wager sheet never covers the table's main button; amounts are at
least 4 mm high (21 px on a 7-inch 800x480 panel, about 133 dpi). Checked at 800x480, 1280x720
and 1920x1080, from ``getBoundingClientRect``, ``scrollHeight`` and computed font sizes.

Set ``TABLECTL_LAYOUT_FIGURES=FILE`` to have the figures measured appended to FILE (JSON
lines) for the docs; the test asserts the bounds, never a time."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.web.conftest import Service, Web, close_and_deal
from tests.web.touch import WAIT_MS, idle, log_in, shot, touch_page

VIEWPORTS = [{"width": 800, "height": 480}, {"width": 1280, "height": 720},
             {"width": 1920, "height": 1080}]
AMOUNT_PX = 21.0
"""4 mm on the official 7-inch 800x480 touch display (154.2 x 85.9 mm: 5.2 px a mm)."""
BOXES = ["1", "2", "3", "4", "5", "6", "7"]
MEASURE = """() => {
  const W = window.innerWidth, H = window.innerHeight;
  const seen = (e) => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none"; };
  const rect = (e) => { const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height, r: r.right, b: r.bottom}; };
  const label = (e) => (e.id ? "#" + e.id : e.tagName.toLowerCase()) +
    (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\\s+/).join(".") : "") +
    (e.dataset.position ? "[" + e.dataset.position + "]" : "") +
    (e.textContent ? " '" + e.textContent.trim().slice(0, 24) + "'" : "");
  const all = (sel) => [...document.querySelectorAll(sel)].filter(seen);
  const within = (a, b) => a.x >= b.x - 0.5 && a.y >= b.y - 0.5 && a.r <= b.r + 0.5 && a.b <= b.b + 0.5;
  const meets = (a, b) => a.x < b.r - 0.5 && b.x < a.r - 0.5 && a.y < b.b - 0.5 && b.y < a.b - 0.5;
  const screen = {x: 0, y: 0, r: W, b: H};
  const parts = all("#dealer .bar, #next, #round-note, #hold, #answer, #actions > button, " +
                    "#dealer-hand, #boxes > .box, #void-row > button, #wager-panel");
  const clipped = [];
  for (const e of all("#dealer button, #dealer .box, #dealer .amount, #dealer .result .sum, " +
                      "#dealer .card, #dealer .total, #next, #hold h2, #hold p")) {
    if (!within(rect(e), screen)) clipped.push(label(e) + " off screen");
    if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== "visible")
      clipped.push(label(e) + " cut inside");
  }
  for (const box of all("#boxes > .box")) for (const e of box.querySelectorAll(".card, .amount, .result, button, .total"))
    if (seen(e) && !within(rect(e), rect(box))) clipped.push(label(e) + " outside " + label(box));
  const overlaps = [];
  for (let i = 0; i < parts.length; i++) for (let j = i + 1; j < parts.length; j++) {
    const a = parts[i], b = parts[j];
    if (a.id === "wager-panel" || b.id === "wager-panel") continue;
    if (meets(rect(a), rect(b))) overlaps.push(label(a) + " x " + label(b));
  }
  const size = (sel) => all(sel).map((e) => parseFloat(getComputedStyle(e).fontSize));
  const amounts = size("#dealer .amount, #dealer .result .sum, #dealer .total, #dealer .pending");
  const main = all("#actions > button");
  const panel = all("#wager-panel");
  const covered = all("#dealer button").filter((b) => !b.closest("dialog")).filter((b) => { const r = rect(b);
    const hit = document.elementFromPoint(r.x + r.w / 2, r.y + r.h / 2);
    return !(hit && (hit === b || b.contains(hit))); }).map(label);
  return {viewport: [W, H], scroll: document.scrollingElement.scrollHeight - H,
          scroll_x: document.scrollingElement.scrollWidth - W,
          boxes: all("#boxes > .box").length, clipped, overlaps, covered,
          amount_px: amounts.length ? Math.min(...amounts) : null,
          labels_px: Math.min(...size("#dealer .who, #dealer .bet, #dealer .pos")),
          hold_px: Math.min(...size("#hold h2").concat([999])),
          hold_words_px: Math.min(...size("#hold p").concat([999])),
          next_px: Math.min(...size("#next")),
          bottom: Math.max(...parts.filter((e) => e.id !== "wager-panel").map((e) => rect(e).b)),
          panel: panel.length ? rect(panel[0]) : null,
          main: main.length ? rect(main[0]) : null};
}"""


def measure(page: Page, what: str) -> dict[str, Any]:
    """The figures of the screen as it is now, appended to ``TABLECTL_LAYOUT_FIGURES``."""
    figures: dict[str, Any] = page.evaluate(MEASURE)
    figures["what"] = what
    target = os.environ.get("TABLECTL_LAYOUT_FIGURES")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(json.dumps(figures) + "\n")
    return figures


def assert_fits(figures: dict[str, Any], boxes: int) -> None:
    """Everything on the screen, nothing cut or overlapping, no scrolling, 4 mm amounts."""
    assert figures["boxes"] == boxes, figures
    assert figures["scroll"] <= 0 and figures["scroll_x"] <= 0, figures
    assert figures["clipped"] == [], figures
    assert figures["overlaps"] == [], figures
    assert figures["covered"] == [], figures
    assert figures["amount_px"] is None or figures["amount_px"] >= AMOUNT_PX, figures


@pytest.fixture(name="dealt_round")
def dealt_round_fixture(service: Service) -> Iterator[dict[str, Any]]:
    """A round on all 7 boxes, dealt: an Ante everywhere, Pair Plus on 1, 3, 5 and 7, a
    standing player's Ante on 2 and 6 (RWS-NC3P 1.15's seated and standing players; the bench
    deals RWS-3CP from its shuffler). The round is voided afterwards."""
    idle(service)
    service.call("round.open")
    for box in BOXES:
        wagers = [("ante", 500, f"box{box}-seated", True)]
        if int(box) % 2:
            wagers.append(("pair_plus", 2500, f"box{box}-seated", True))
        if box in ("2", "6"):
            wagers.append(("ante", 10000, f"box{box}-standing-1", False))
        for n, (bet, amount, player, seated) in enumerate(wagers):
            service.call("wager.place", {"wager_id": f"lay-{box}-{n}", "position": box,
                                         "bet": bet, "amount": amount, "player": player,
                                         "seated": seated})
    close_and_deal(service)
    yield service.call("round.status")
    idle(service)


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=lambda v: f"{v['width']}x{v['height']}")
def test_seven_boxes_fit_while_players_decide_and_in_a_hold(
        browser: Any, web: Web, service: Service, dealt_round: dict[str, Any],
        viewport: dict[str, int], tmp_path: Path) -> None:
    """Players decide on 7 boxes: the next step, Play and Fold on every box, every card and
    amount on the screen, no scrolling. Then a hold (the dealer reports an exposed card): the
    hold's title, its buttons and every box still fit."""
    assert dealt_round["state"] == "decisions"
    with touch_page(browser, viewport) as page:
        log_in(page, web, "dealer1")
        expect(page.locator("#boxes .box button.choice")).to_have_count(14, timeout=WAIT_MS)
        size = f"{viewport['width']}x{viewport['height']}"
        if size == "800x480":
            shot(page, "web-layout-decide-800x480.png", tmp_path)
        assert_fits(measure(page, "decisions"), 7)
        service.call("irregularity.report", {"kind": "exposed_card", "position": "4",
                                             "source": "dealer"})
        expect(page.locator("#hold")).to_be_visible(timeout=WAIT_MS)
        expect(page.locator("#hold-buttons button").first).to_be_visible()
        if size == "800x480":
            shot(page, "web-layout-hold-800x480.png", tmp_path)
        assert_fits(measure(page, "hold"), 7)


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=lambda v: f"{v['width']}x{v['height']}")
def test_seven_boxes_fit_with_their_results(browser: Any, web: Web, service: Service,
                                            dealt_round: dict[str, Any],
                                            viewport: dict[str, int], tmp_path: Path) -> None:
    """After settlement every wager's result (``paid``, ``taken``) is on its box, all 7 boxes
    on the screen with no scrolling (3CP results needed 557 px more at 800x480)."""
    for box in BOXES:
        service.call("decide", {"position": box, "choice": "fold" if box == "4" else "play"})
    service.call("round.reveal")
    service.call("round.settle")
    with touch_page(browser, viewport) as page:
        log_in(page, web, "dealer1")
        wagers = service.call("round.status")["wagers"]  # the Play wagers the table placed too
        expect(page.locator("#boxes .result")).to_have_count(len(wagers), timeout=WAIT_MS)
        shot(page, f"web-layout-settled-{viewport['width']}x{viewport['height']}.png", tmp_path)
        assert_fits(measure(page, "settled"), 7)


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=lambda v: f"{v['width']}x{v['height']}")
def test_the_wager_sheet_never_covers_no_more_bets(browser: Any, web: Web, service: Service,
                                                   viewport: dict[str, int],
                                                   tmp_path: Path) -> None:
    """Bets open on 7 boxes, 4 wagers on box 3: with the wager sheet open, "No more bets"
    is still on the screen and answers a tap (nothing on top of it), and the sheet's chips
    and Place are inside the screen."""
    idle(service)
    service.call("round.open")
    for box in BOXES:
        service.call("wager.place", {"wager_id": f"bet-{box}", "position": box, "bet": "ante",
                                     "amount": 500})
    for n, (bet, player) in enumerate([("pair_plus", "box3-seated"),
                                       ("ante", "box3-standing-1"),
                                       ("pair_plus", "box3-standing-1")]):
        service.call("wager.place", {"wager_id": f"bet-3-{n}", "position": "3", "bet": bet,
                                     "amount": 500, "player": player,
                                     "seated": player.endswith("seated")})
    try:
        with touch_page(browser, viewport) as page:
            log_in(page, web, "dealer1")
            expect(page.locator("#box-3 li.wager")).to_have_count(4, timeout=WAIT_MS)
            page.locator("#box-3").tap()
            expect(page.locator("#wager-panel")).to_be_visible()
            figures = measure(page, "betting, sheet open")
            assert figures["main"] is not None, figures
            assert figures["covered"] == [] and figures["clipped"] == [], figures
            assert figures["scroll"] <= 0, figures
            panel, main = figures["panel"], figures["main"]
            assert main["b"] <= panel["y"] or main["y"] >= panel["b"], figures
            for control in ("#wager-place", "#chips button >> nth=-1", "#wager-done"):
                expect(page.locator(control)).to_be_in_viewport(ratio=1.0)
            if viewport["width"] == 800:
                shot(page, "web-layout-bets-800x480.png", tmp_path)
            page.locator("#wager-done").tap()
            expect(page.locator("#wager-panel")).to_be_hidden()
            assert_fits(measure(page, "betting"), 7)
    finally:
        idle(service)
