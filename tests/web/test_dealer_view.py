"""The dealer's touch screen as data: the pure view (:func:`controller.web.dealer.dealer_view`),
the round's notes from ``watch`` events, and the buttons read from ``waits``. No browser, no
service: statuses and events shaped as ``round.status`` and ``watch`` give them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from controller.web.config import load_web_config
from controller.web.dealer import DEFAULT_CHIPS, RoundNotes, dealer_view
from controller.web.dealer_actions import buttons_for, commands_in
from controller.web.errors import WebConfigError

DEVICE = {"name": "shuffler", "kind": "shuffler", "online": True, "cards_left": 40,
          "operator": {"state": "ready", "hold": None, "faults": []}}
LAYOUT = {"boxes": ["1", "2", "3", "4", "5", "6", "7"],
          "limits": {"ante": {"min": 500, "max": 50000}, "pair_plus": {"min": 500, "max": 25000}}}
VOID_ANY_TIME = {"waits_for": "(any time)", "way_out": "tablectl supervisor void REASON",
                 "role": "supervisor"}


def status(state: str, **extra: Any) -> dict[str, Any]:
    """A ``round.status`` of the bench table (RWS-3CP) in ``state``."""
    base: dict[str, Any] = {
        "round": 7, "state": state, "game": "rws-three-card-poker", "layout": LAYOUT,
        "wagers": [
            {"id": "a1", "position": "1", "bet": "ante", "amount": 500, "player": "box1-seated",
             "seated": True},
            {"id": "a2", "position": "2", "bet": "ante", "amount": 2500, "player": None,
             "seated": None},
            {"id": "s2", "position": "2", "bet": "ante", "amount": 1000,
             "player": "box2-standing-1", "seated": False}],
        "hands": {}, "held_for": None, "options_pending": [], "decisions_due": [],
        "device": DEVICE, "waits": []}
    base.update(extra)
    return base


def texts(value: Any) -> Iterable[str]:
    """Every string the page could show (keys are not shown; verbs and args are sent)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if key not in ("verb", "args", "id", "bet", "player", "outcome", "state", "game",
                           "position", "kind", "needs", "requires", "rule", "clause",
                           "faults"):
                yield from texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from texts(item)


def box(view: Mapping[str, Any], position: str) -> dict[str, Any]:
    return next(b for b in view["boxes"] if b["position"] == position)


def test_wagers_are_shown_per_box_and_per_player_seated_and_standing() -> None:
    """Each box lists its players (seated, standing, unnamed) with their own wagers; the seven
    boxes of the cloth are all there while bets are open, so any can take a bet."""
    view = dealer_view(status("betting", waits=[
        {"waits_for": "wagers, then No more bets", "way_out": "tablectl round close",
         "role": "dealer"}]))
    assert [b["position"] for b in view["boxes"]] == LAYOUT["boxes"]
    two = box(view, "2")
    assert [(p["player"], p["seated"], [w["amount"] for w in p["wagers"]])
            for p in two["players"]] == [(None, None, [2500]), ("box2-standing-1", False, [1000])]
    assert box(view, "1")["players"][0]["seated"] is True
    assert box(view, "3")["empty"] and not two["empty"]
    assert view["betting"] is True


def test_bets_offer_the_chips_bets_with_the_tables_limits() -> None:
    """The dealer's chips place Ante, Pair Plus, Progressive; Play is the table's own wager
    from a decision (RWS-3CP 3.8), never offered; the limits are the table's (``layout``)."""
    view = dealer_view(status("betting"), chips=(100, 2500))
    bets = {b["bet"]: b for b in view["bets"]}
    assert "play" not in bets and {"ante", "pair_plus", "progressive"} <= set(bets)
    assert (bets["ante"]["min"], bets["ante"]["max"]) == (500, 50000)
    assert bets["progressive"]["min"] is None and bets["progressive"]["requires"] == "ante"
    assert view["chips"] == [100, 2500]
    assert dealer_view(status("betting"))["chips"] == list(DEFAULT_CHIPS)


def test_results_say_paid_taken_and_returned_with_the_amount() -> None:
    """A win is paid its net, a loss taken its stake, and each result sits on its wager."""
    notes = RoundNotes().noted({"type": "RoundSettled", "round": 7, "settlement": {"results": [
        {"wager_id": "a1", "outcome": "win", "net": 500, "rule": "RWS-3CP 3.9.2, 4.1",
         "stake": 500},
        {"wager_id": "a2", "outcome": "lose", "net": -2500, "rule": "RWS-3CP 3.8.1",
         "components": [{"label": "fold", "net": -2500, "rule": "RWS-3CP 3.8.1"}],
         "stake": 2500},
        {"wager_id": "s2", "outcome": "push", "net": 0, "rule": "RWS-3CP 3.9.1",
         "stake": 1000}]}})
    view = dealer_view(status("settled"), notes=notes)
    won = box(view, "1")["players"][0]["wagers"][0]["result"]
    assert (won["words"], won["moved"], won["rule"]) == ("paid 5.00", 500, "RWS-3CP 3.9.2, 4.1")
    two = box(view, "2")
    assert two["players"][0]["wagers"][0]["result"]["words"] == "taken 25.00"
    assert two["players"][1]["wagers"][0]["result"]["words"] == "push: 10.00 stays"
    assert two["folded"], "the settlement's fold component marks the box folded"


def test_a_void_returns_every_stake_and_says_so() -> None:
    """RoundVoided's results carry ``stake`` 0 (nothing was in action): the screen returns the
    wager's own amount, ``returned 25.00``, never ``returned 0.00``."""
    notes = RoundNotes().noted({"type": "RoundVoided", "round": 7, "reason": "count",
                                "clause": "RWS-3CP 5.1.4", "settlement": {"results": [
                                    {"wager_id": w, "outcome": "returned", "net": 0,
                                     "rule": "RWS-3CP 5.1.4", "stake": 0}
                                    for w in ("a1", "a2", "s2")]}})
    view = dealer_view(status("voided"), notes=notes)
    shown = [w["result"]["words"] for b in view["boxes"] for p in b["players"]
             for w in p["wagers"]]
    assert shown == ["returned 5.00", "returned 25.00", "returned 10.00"]
    assert view["void_clause"] == "RWS-3CP 5.1.4"
    assert view["words"] == "Round void"


def test_a_fold_marks_the_box_before_settlement() -> None:
    """RWS-3CP 3.8: a box whose player folded is marked from the DecisionMade event; the
    boxes still to decide have the decide buttons the waits offer, play and fold."""
    notes = RoundNotes()
    for event in ({"type": "RoundOpened", "round": 7},
                  {"type": "DecisionMade", "round": 7, "position": "2", "choice": "fold"}):
        notes = notes.noted(event)
    view = dealer_view(status("decisions", decisions_due=["1"], hands={
        "1": ["AS", "KD", "2C"], "2": ["3C", "4D", "9S"], "dealer": ["QH", "QS", "3D"]},
        waits=[{"waits_for": "the decisions of 1", "way_out": "tablectl decide POS play|fold",
                "role": "dealer"}, VOID_ANY_TIME]), notes=notes)
    assert box(view, "2")["folded"] and box(view, "2")["decision"] == "fold"
    assert box(view, "1")["decision_due"] and not box(view, "2")["decision_due"]
    assert box(view, "1")["choices"]["decide"] == ["play", "fold"]
    assert box(view, "2")["choices"]["decide"] == []
    assert view["dealer"]["cards"] == [None, None, None]
    assert view["next"] == "Ask box 1: play or fold"
    assert view["void"]["verb"] == "supervisor.void" and view["void"]["supervisor"]


def test_notes_of_another_round_are_not_shown() -> None:
    """Results noted for round 6 do not appear on round 7's boxes."""
    notes = RoundNotes().noted({"type": "RoundSettled", "round": 6, "settlement": {
        "results": [{"wager_id": "a1", "outcome": "win", "net": 500, "rule": "x"}]}})
    view = dealer_view(status("settled"), notes=notes)
    assert box(view, "1")["players"][0]["wagers"][0]["result"] is None
    assert view["results"] == []


def test_a_hold_is_words_with_exactly_the_buttons_waits_offers() -> None:
    """An exposed card held for a fact question: the screen says it in words (no identifier,
    no shell command) and offers the answers the wait names, each a supervisor's, plus the
    supervisor's void that is always a way out; nothing else (no continue, no dealer step)."""
    held = status("hold", held_for="exposed_card (RWS-NC3P 5.7)", waits=[
        {"waits_for": "a supervisor's decision on exposed_card (RWS-NC3P 5.7)",
         "way_out": "tablectl supervisor answer in_device | supervisor answer by_dealer",
         "role": "supervisor"}, VOID_ANY_TIME])
    view = dealer_view(held)
    hold = view["hold"]
    assert hold["title"] == "A card was exposed" and hold["clause"] == "RWS-NC3P 5.7"
    assert [(b["verb"], b["args"]) for b in hold["buttons"]] == [
        ("supervisor.answer", {"answer": "in_device"}),
        ("supervisor.answer", {"answer": "by_dealer"}), ("supervisor.void", {})]
    assert all(b["supervisor"] for b in hold["buttons"])
    assert view["actions"] == []
    assert view["next"] == "Call a supervisor: a card was exposed"
    for text in texts(view):
        assert "tablectl" not in text and not re.search(r"[a-z]+_[a-z]+", text), text


def test_a_device_hold_and_fault_are_words_too() -> None:
    """The shuffler's operator hold and its faults read as sentences, not tokens."""
    device = {**DEVICE, "operator": {"state": "held", "hold": "repeated_failure",
                                     "faults": ["door_open"]}}
    view = dealer_view(status("dealing", device=device, waits=[
        {"waits_for": "a fixed device", "way_out": "tablectl supervisor clear-fault",
         "role": "supervisor"}]))
    assert view["hold"]["title"] == "The shuffler is held"
    assert "keeps failing" in view["hold"]["detail"]
    assert [b["verb"] for b in view["hold"]["buttons"]] == ["supervisor.clear-fault"]
    assert view["device"]["fault_words"] == "door open"
    for text in texts(view):
        assert "tablectl" not in text and "_" not in text, text


@pytest.mark.parametrize(("state", "way_out", "verbs"), [
    ("idle", "tablectl round open", ["round.open"]),
    ("betting", "tablectl round close", ["round.close"]),
    ("dealt", "tablectl round reveal", ["round.reveal"]),
    ("revealed", "tablectl round settle", ["round.settle"]),
    ("options", "tablectl option POS continue|withdraw, or tablectl options close",
     ["options.close"]),
    # a shuffler shuffles by itself: the shoe's "confirm the shuffle" is not offered
    ("closed", "automatic with a shuffler; tablectl round shuffled with a shoe", []),
])
def test_the_dealers_buttons_are_the_rounds_way_out(state: str, way_out: str,
                                                   verbs: list[str]) -> None:
    view = dealer_view(status(state, waits=[{"waits_for": "x", "way_out": way_out,
                                             "role": "dealer"}]))
    assert [b["verb"] for b in view["actions"]] == verbs
    assert not any(b["supervisor"] for b in view["actions"])


def test_cards_left_only_while_a_deck_is_in_play() -> None:
    """The shuffler's count is 0 after END_ROUND: "0 cards left" while bets are open would be
    read as an empty shuffler, so the count shows only from the shuffle to the settlement."""
    assert dealer_view(status("betting"))["device"]["cards_left"] is None
    assert dealer_view(status("idle"))["device"]["cards_left"] is None
    assert dealer_view(status("decisions"))["device"]["cards_left"] == 40


def test_options_are_asked_per_player_at_the_box() -> None:
    """RWS-NC3P 5.7: the players at a box asked for their option each get continue and
    withdraw; an option taken shows on the wagers it moved."""
    notes = RoundNotes().noted({"type": "PlayerOptionTaken", "round": 7, "position": "2",
                                "option": "withdraw", "wager_ids": ["s2"], "clause": "5.7"})
    view = dealer_view(status("options", game="rws-nc-three-pictures", wagers=[
        {"id": "m1", "position": "2", "bet": "main", "amount": 500, "player": "box2-seated",
         "seated": True},
        {"id": "s2", "position": "2", "bet": "main", "amount": 500, "player": "box2-standing-1",
         "seated": False}],
        options_pending=["2:box2-seated"], waits=[
            {"waits_for": "the options of 2",
             "way_out": "tablectl option POS continue|withdraw, or tablectl options close",
             "role": "dealer"}]), notes=notes)
    two = box(view, "2")
    assert two["option_due"]
    assert [(p["player"], p["option_due"]) for p in two["players"]] == [
        ("box2-seated", True), ("box2-standing-1", False)]
    assert two["players"][1]["wagers"][0]["option"] == "withdraw"
    assert two["choices"]["option"] == ["continue", "withdraw"]
    assert view["next"] == "Ask box 2: continue or withdraw"


def test_one_command_per_way_out_gives_each_box_its_own_buttons() -> None:
    """Waits that name each box's commands (``tablectl decide 3 play``) give each box exactly
    those; a hold's options, one wait each, give one button each; a way out cut to another
    role's ("a supervisor's command (not one your role may send)") gives no button."""
    view = dealer_view(status("decisions", decisions_due=["1", "2"], waits=[
        {"waits_for": "the decision of box 1", "way_out": "tablectl decide 1 play",
         "role": "dealer"},
        {"waits_for": "the decision of box 1", "way_out": "tablectl decide 1 fold",
         "role": "dealer"},
        {"waits_for": "the decision of box 2", "way_out": "tablectl decide 2 fold",
         "role": "dealer"},
        {"waits_for": "(any time)", "way_out": "a supervisor's command (not one your role may "
         "send)", "role": "supervisor"}]))
    assert box(view, "1")["choices"]["decide"] == ["play", "fold"]
    assert box(view, "2")["choices"]["decide"] == ["fold"]
    assert view["void"] is None and view["actions"] == []
    held = dealer_view(status("hold", held_for="jammed (RWS-NC3P 5.4)", waits=[
        {"waits_for": "a supervisor's decision on jammed (RWS-NC3P 5.4)",
         "way_out": f"tablectl supervisor answer {answer}", "role": "supervisor"}
        for answer in ("interrupts", "not_reconstructable")] + [VOID_ANY_TIME]))
    assert [b["label"] for b in held["hold"]["buttons"]] == [
        "The jam stops the round", "The hands cannot be reconstructed", "Void the round"]
    assert held["hold"]["title"] == "The device jammed"


def test_offline_view_has_nothing_to_press() -> None:
    view = dealer_view(None, problem="connection refused")
    assert view["actions"] == [] and view["void"] is None and view["boxes"] == []
    assert view["next"].startswith("Call a supervisor")


def test_the_view_is_json() -> None:
    """What the server-sent events carry: plain JSON, nothing else."""
    notes = RoundNotes().noted({"type": "DecisionMade", "round": 7, "position": "1",
                                "choice": "play"})
    json.dumps(dealer_view(status("dealt"), notes=notes))


@pytest.mark.parametrize(("way_out", "commands"), [
    ("tablectl supervisor continue | void | reconstruct | order (as the ruling allows)",
     [["supervisor", "continue"], ["supervisor", "void"], ["supervisor", "reconstruct"],
      ["supervisor", "order"]]),
    ("tablectl deck replace | deck counted 52", [["deck", "replace"], ["deck", "counted", "52"]]),
    ("tablectl decide POS play|fold", [["decide", "POS", "play|fold"]]),
    ("the dealer draws", []),
])
def test_way_out_texts_are_read_as_commands(way_out: str, commands: list[list[str]]) -> None:
    assert commands_in(way_out) == commands


def test_buttons_need_what_the_command_needs() -> None:
    """A void asks for a reason; an order for the cards; a supervisor's verb is marked so the
    screen asks a supervisor to log in at the table first."""
    buttons = {b.verb: b for b in buttons_for([
        {"way_out": "tablectl supervisor void REASON | order C1 C2", "role": "supervisor"},
        {"way_out": "tablectl deck counted 52", "role": "dealer"}])}
    assert [n.value for n in buttons["supervisor.void"].needs] == ["reason"]
    assert [n.value for n in buttons["supervisor.order"].needs] == ["cards"]
    assert buttons["deck.counted"].args == {"count": 52} and not buttons["deck.counted"].supervisor


def test_chips_config(tmp_path: Path) -> None:
    """``web.chips``: the table's denominations in minor units, sorted; anything else is a
    one-line error naming the key."""
    path = tmp_path / "web.toml"
    path.write_text("[web]\nchips = [2500, 100, 500]\n")
    assert load_web_config(path).chips == (100, 500, 2500)
    assert load_web_config(None).chips == DEFAULT_CHIPS
    for bad in ("[]", "[0]", "[1.5]", '["5"]', "[true]", "500"):
        path.write_text(f"[web]\nchips = {bad}\n")
        with pytest.raises(WebConfigError, match="web.chips"):
            load_web_config(path)
