"""Every hold's way out on the touch screen, as data (issue 36): the clock hold with the
supervisor's override, the reconstruction and card-pad buttons, the card due after a no-read,
and the dealer's reports, each shown only where ``round.status`` ``waits`` offers its verb.
No browser here; the taps are in ``test_touch_clock.py``, ``test_touch_reconstruct.py``,
``test_touch_order.py`` and, below, the dealer's report against the bench table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from controller.web.dealer import cards_due, dealer_view
from controller.web.dealer_actions import buttons_for, report_choices
from tests.web.conftest import Service, Web, close_and_deal
from tests.web.test_dealer_view import VOID_ANY_TIME, status
from tests.web.touch import WAIT_MS, idle, log_in, shot, touch_page

CLOCK_WAIT = {"waits_for": "a trusted clock, or a supervisor's override (clock not "
              "synchronised)", "way_out": "tablectl supervisor clock-override --reason REASON",
              "role": "supervisor"}
REPORTS = [
    {"waits_for": "an irregularity only the dealer sees",
     "way_out": "tablectl report exposed_card --position POS --source dealer", "role": "dealer"},
    {"waits_for": "an irregularity only the dealer sees",
     "way_out": "tablectl report dropped_card --position POS", "role": "dealer"},
    {"waits_for": "an irregularity only the dealer sees",
     "way_out": "tablectl report burn_error", "role": "dealer"},
]
"""The shape the dealer's reports take in ``waits`` (one command per kind, ``POS`` the box the
dealer names), as ``controller/service/wiring/liveness.py`` would offer them."""


def test_the_clock_hold_offers_the_supervisors_override() -> None:
    """The [clock] policy refuses new rounds: the screen shows a hold in words whose one button
    is the override (a supervisor's, asking a reason), and no Open."""
    view = dealer_view(status("idle", clock_blocks="clock not synchronised",
                              waits=[CLOCK_WAIT]))
    assert view["hold"]["title"] == "The clock cannot be trusted"
    assert "clock not synchronised" in view["hold"]["detail"]
    assert [(b["verb"], b["needs"], b["supervisor"]) for b in view["hold"]["buttons"]] == [
        ("supervisor.clock-override", ["reason"], True)]
    assert view["actions"] == []


def test_without_the_waits_the_clock_hold_has_no_button() -> None:
    """A dealer's status (the override cut to "call a supervisor") shows the hold, no button."""
    waits = [{**CLOCK_WAIT, "way_out": "call a supervisor"}]
    view = dealer_view(status("idle", clock_blocks="clock not synchronised", waits=waits))
    assert view["hold"]["buttons"] == []


def test_reconstruct_asks_for_the_hands_and_order_for_the_cards() -> None:
    """Reconstruct opens the picker of hands (RWS-NC3P 5.9: nothing sent without them); the
    order opens the card pad."""
    buttons = {b.verb: b for b in buttons_for([
        {"way_out": "tablectl supervisor reconstruct", "role": "supervisor"},
        {"way_out": "tablectl supervisor order CARD CARD CARD", "role": "supervisor"}])}
    assert [n.value for n in buttons["supervisor.reconstruct"].needs] == ["hands"]
    assert [n.value for n in buttons["supervisor.order"].needs] == ["cards"]


@pytest.mark.parametrize(("hands", "held", "due"), [
    ({"1": ["2C", "TD"], "2": ["6H"], "dealer": ["KD"]}, "no_read (RWS-NC3P 5.17)",
     {"position": "2", "label": "Box 2", "count": 1}),
    ({"1": ["2C"], "2": ["6H"], "dealer": [None]}, "no_read (RWS-NC3P 5.17)",
     {"position": "1", "label": "Box 1", "count": 1}),
    ({"1": ["2C", "TD", "4S"], "2": ["6H", "7H", "8H"], "dealer": [None, None]},
     "simultaneous_draw (RWS-NC3P 5.11, 5.11.1)",
     {"position": "dealer", "label": "the dealer", "count": None}),
])
def test_the_card_due_names_its_box_and_count(hands: dict[str, Any], held: str,
                                              due: dict[str, Any]) -> None:
    """Cards go round the table one at a time (boxes with a wager, then the dealer): the card
    a reader missed is the next box's with the fewest cards; a no-read is one card, a
    simultaneous draw as many as were drawn (the screen does not know: no count)."""
    shown = status("hold", game="rws-nc-three-pictures", held_for=held, hands=hands,
                   layout={"boxes": ["1", "2", "3", "4", "5", "6"], "limits": {}},
                   wagers=[{"id": "w1", "position": "1", "bet": "main", "amount": 1000},
                           {"id": "w2", "position": "2", "bet": "main", "amount": 1000}])
    assert cards_due(shown) == due


def test_the_dealers_reports_come_from_waits() -> None:
    """Each report ``waits`` offers is a choice of the Report sheet, in words, with the boxes
    betting this round and the dealer where the dealer names one; none offered, no Report."""
    assert report_choices(REPORTS) == [
        {"kind": "exposed_card", "pick_box": True, "position": None, "source": "dealer"},
        {"kind": "dropped_card", "pick_box": True, "position": None, "source": None},
        {"kind": "burn_error", "pick_box": False, "position": None, "source": None}]
    view = dealer_view(status("decisions", decisions_due=["1", "2"],
                              waits=[*REPORTS, VOID_ANY_TIME]))
    assert [r["words"] for r in view["reports"]] == ["Card exposed", "Card dropped",
                                                     "Burn error"]
    assert [b["label"] for b in view["reports"][0]["boxes"]] == ["Box 1", "Box 2", "Dealer"]
    assert view["reports"][2]["boxes"] == []
    assert dealer_view(status("decisions", waits=[VOID_ANY_TIME]))["reports"] == []
    cut = [{**w, "way_out": "the dealer acts"} for w in REPORTS]  # surveillance's status
    assert dealer_view(status("decisions", waits=cut))["reports"] == []


def test_the_dealer_reports_an_exposed_card_by_taps(browser: Any, web: Web, service: Service,
                                                    tmp_path: Path) -> None:
    """While players decide, the dealer taps Report, "Card exposed", the box, Send: the table
    rules it (``IrregularityRuled`` with the game's clause; RWS-3CP: the round holds for the
    supervisor) and the screen shows the hold. Offered only where ``waits`` offers the
    report: until the table's waits do, this is skipped."""
    idle(service)
    service.call("round.open")
    service.call("wager.place", {"wager_id": "rep-1", "position": "3", "bet": "ante",
                                 "amount": 500})
    close_and_deal(service)
    offered = report_choices(service.call("round.status")["waits"])
    if not any(r["kind"] == "exposed_card" for r in offered):
        service.call("supervisor.void", {"reason": "test cleanup"})
        pytest.skip("round.status waits offers no dealer's report (controller/service/"
                    "wiring/liveness.py does not offer `tablectl report` yet)")
    with touch_page(browser) as page:
        log_in(page, web, "dealer1")
        page.locator("#report").tap()
        pick = page.locator("#pick")
        expect(pick).to_be_visible()
        pick.locator('button[data-kind="exposed_card"]').tap()
        pick.locator('.report-boxes button[data-box="3"]').tap()
        shot(page, "web-touch-report-800x480.png", tmp_path)
        with service.client() as watcher:
            events = watcher.watch()
            page.locator("#pick-submit").tap()
            ruled = next(e for e in events if e.get("type") == "IrregularityRuled")
        assert ruled["kind"] == "exposed_card" and ruled["clause"]
        expect(page.locator("#hold")).to_be_visible(timeout=WAIT_MS)
    service.call("supervisor.void", {"reason": "test cleanup"})
