"""Every hold's way out on the touch screen, as data (issue 36): the clock hold with the
supervisor's override, the reconstruction and card-pad buttons, the card due after a no-read,
and the dealer's reports, each shown only where ``round.status`` ``waits`` offers its verb.
The taps of the others are in ``test_touch_clock.py``, ``test_touch_reconstruct.py`` and
``test_touch_order.py``; below, against the bench table (``tablectl run``, RWS-3CP, a
simulated shuffler): which reports the table offers in each state, every one offered accepted
by the table, none in a hold, and by taps the exposed-card report and the wrong box's swap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import shlex

import pytest
from playwright.sync_api import expect

from controller.cli import build_parser
from controller.service.control.client import RequestRefused
from controller.service.wiring.liveness import REPORT_WAIT, SWAP, dealer_reports, waits
from controller.web.dealer import dealer_view
from controller.web.dealer_actions import buttons_for
from controller.web.dealer_hold import cards_due
from controller.web.dealer_reports import report_choices
from tests.web.conftest import Service, Web, close_and_deal
from tests.web.test_dealer_view import VOID_ANY_TIME, status
from tests.web.test_touch_reconstruct import supervisor_logs_in
from tests.web.touch import WAIT_MS, idle, log_in, shot, tap_watching, touch_page

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
    supervisor) and the screen shows the hold, and no Report button: the table refuses a
    report while a round is held, so none is offered."""
    idle(service)
    service.call("round.open")
    service.call("wager.place", {"wager_id": "rep-1", "position": "3", "bet": "ante",
                                 "amount": 500})
    close_and_deal(service)
    offered = report_choices(service.call("round.status")["waits"])
    assert [r["kind"] for r in offered] == ["exposed_card", "dropped_card", "card_after_game",
                                            "dealt_incorrectly"]
    with touch_page(browser) as page:
        log_in(page, web, "dealer1")
        page.locator("#report").tap()
        pick = page.locator("#pick")
        expect(pick).to_be_visible()
        pick.locator('button[data-kind="exposed_card"]').tap()
        pick.locator('.report-boxes button[data-box="3"]').tap()
        shot(page, "web-touch-report-800x480.png", tmp_path)
        ruled = tap_watching(service, page.locator("#pick-submit"), "IrregularityRuled")[-1]
        assert ruled["kind"] == "exposed_card" and ruled["clause"]
        expect(page.locator("#hold")).to_be_visible(timeout=WAIT_MS)
        expect(page.locator("#report")).to_have_count(0)
    assert report_choices(service.call("round.status")["waits"]) == []
    with pytest.raises(RequestRefused, match="already held"):
        service.call("irregularity.report", {"kind": "dropped_card", "position": "3"})
    service.call("supervisor.void", {"reason": "test cleanup"})


def snapshot(state: str, **extra: Any) -> dict[str, Any]:
    return {"state": state, "hands": {}, **extra}


@pytest.mark.parametrize(("shown", "operator", "kinds"), [
    (snapshot("idle"), {}, []),
    (snapshot("settled"), {}, []),
    (snapshot("betting"), {}, ["exposed_card"]),
    (snapshot("betting", offline={"shuffler": "unplugged"}), {}, []),
    (snapshot("dealing", hands={"1": ["2C"]}), {"state": "dealing"}, []),
    (snapshot("dealing", hands={"1": ["2C"]}), {"state": "dealer_draws"},
     ["exposed_card", "dropped_card", "dealt_incorrectly"]),
    (snapshot("burn"), {"state": "dealer_draws"}, ["exposed_card", "burn_error"]),
    (snapshot("decisions", hands={"1": ["2C", "3C", "4C"]}, decisions_due=["1"]), {},
     ["exposed_card", "dropped_card", "card_after_game", "dealt_incorrectly"]),
    (snapshot("revealed", hands={"1": ["2C", "3C", "4C"]}), {}, ["card_after_game"]),
    (snapshot("hold", held_for="exposed_card (x)", hold_options=["void"]), {}, []),
    (snapshot("decisions", journal_hold="chain broken"), {}, []),
])
def test_the_reports_offered_follow_the_round(shown: dict[str, Any], operator: dict[str, Any],
                                              kinds: list[str]) -> None:
    """Which reports the table offers, by state: none between rounds or in a hold (the table
    refuses them there), none while the shuffler deals on its own or the device is offline
    before No more bets (the round's own step stays the dealer's first command); the box is
    asked once a card has reached one."""
    offered = report_choices(w.to_json() for w in dealer_reports(shown, operator))
    assert [r["kind"] for r in offered] == kinds
    dealt = any(shown["hands"].values())
    for report in offered:
        assert report["pick_box"] is (dealt and report["kind"] in (
            "exposed_card", "dropped_card", "dealt_incorrectly"))
    if kinds:  # the round's own command first, the reports after it, the void last
        listed = waits(shown, operator)
        first = next(i for i, w in enumerate(listed) if w["waits_for"] == REPORT_WAIT)
        assert all(w["waits_for"] != REPORT_WAIT for w in listed[:first])
        assert first > 0


def test_a_wrong_box_hold_offers_the_swap() -> None:
    """Hands dealt to the wrong boxes (RWS-3CP 5.1.4): where the hold offers a reconstruction
    it also offers the swap of two complete hands, a box picker on the screen; other holds
    with a reconstruction do not."""
    wrong = waits(snapshot("hold", held_for="dealt_incorrectly (RWS-3CP 5.1.4)",
                           hold_options=["reconstruct", "not_reconstructable", "void"]), None)
    assert SWAP in [w["way_out"] for w in wrong]
    other = waits(snapshot("hold", held_for="jammed (RWS-NC3P 5.17)",
                           hold_options=["void", "continue", "reconstruct"]), None)
    assert SWAP not in [w["way_out"] for w in other]
    button = next(b for b in buttons_for(wrong) if b.verb == "supervisor.swap")
    assert [n.value for n in button.needs] == ["positions"] and button.supervisor


def sent(way_out: str, box: str) -> tuple[str, dict[str, Any]]:
    """The verb and arguments of an offered command as ``tablectl`` sends it, the dealer's
    box for ``POS``."""
    words = [box if w == "POS" else w for w in shlex.split(way_out)[1:]]
    args = build_parser().parse_args([*words, "--socket", "/x.sock"])
    verb, request_args = args.verb(args)
    return verb, request_args


def to_stage(service: Service, stage: str) -> None:
    """A fresh round at ``stage``: bets on boxes 1 and 3, dealt by the simulated shuffler."""
    idle(service)
    service.call("round.open")
    for box in ("1", "3"):
        service.call("wager.place", {"wager_id": f"st-{stage}-{box}-{next(SERIAL)}",
                                     "position": box, "bet": "ante", "amount": 500})
    if stage == "betting":
        return
    close_and_deal(service)
    if stage == "decisions":
        return
    for box in ("1", "3"):
        service.call("decide", {"position": box, "choice": "play"})
    if stage == "revealed":
        service.call("round.reveal")
    assert service.call("round.status")["state"] == stage


SERIAL = iter(range(10**6))


@pytest.mark.parametrize("stage", ["betting", "decisions", "dealt", "revealed"])
def test_every_report_offered_is_accepted_by_the_table(service: Service, stage: str) -> None:
    """The table never offers a way out it would refuse: in each state the bench table
    reaches (RWS-3CP, a shuffler), every report ``round.status`` offers, sent as offered (the
    dealer's box for ``POS``), is ruled by the table (``IrregularityRuled`` with a clause),
    each in a round of its own."""
    to_stage(service, stage)
    offered = [w["way_out"] for w in service.call("round.status")["waits"]
               if w["waits_for"] == REPORT_WAIT]
    assert offered, stage
    for index, way_out in enumerate(offered):
        if index:
            to_stage(service, stage)
        verb, args = sent(way_out, "3")
        answer = service.call(verb, args)
        assert answer.get("accepted") is not False, (way_out, answer)
        ruled = [e for e in answer["events"] if e.get("type") == "IrregularityRuled"]
        assert ruled and ruled[0]["kind"] == args["kind"] and ruled[0]["clause"], answer
    idle(service)


def test_a_wrong_box_is_swapped_by_taps(browser: Any, web: Web, service: Service,
                                        tmp_path: Path) -> None:
    """The dealer reports a wrong box (box 1's hand belonged at box 3): RWS-3CP has no clause
    once the players hold their cards, the supervisor decides; the hold offers the swap, the
    supervisor logs in by taps, taps box 1 then box 3, Send: the table moves the two complete
    hands (``HandsMoved``, the supervisor named) and the round goes on."""
    to_stage(service, "decisions")
    before = service.call("round.status")["hands"]
    with touch_page(browser) as page:
        log_in(page, web, "dealer1")
        page.locator("#report").tap()
        pick = page.locator("#pick")
        pick.locator('button[data-kind="dealt_incorrectly"]').tap()
        pick.locator('.report-boxes button[data-box="1"]').tap()
        page.locator("#pick-submit").tap()
        hold = page.locator("#hold")
        swap = hold.locator('button[data-verb="supervisor.swap"]')
        expect(swap).to_be_visible(timeout=WAIT_MS)
        swap.tap()
        supervisor_logs_in(page)
        expect(pick).to_be_visible()
        expect(page.locator("#pick-submit")).to_be_disabled()
        pick.locator('button.to[data-box="1"]').tap()
        pick.locator('button.to[data-box="3"]').tap()
        shot(page, "web-touch-swap-800x480.png", tmp_path)
        moved = tap_watching(service, page.locator("#pick-submit"), "HandsMoved")[-1]
        assert sorted(map(tuple, moved["moves"])) == [("1", "3"), ("3", "1")]
        expect(hold).to_be_hidden(timeout=WAIT_MS)
    after = service.call("round.status")["hands"]
    assert after["1"] == before["3"] and after["3"] == before["1"]
    idle(service)
