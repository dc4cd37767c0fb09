"""Holds in dealer words that name the card and the box (issue 36): the exposed-card hold says
which card and where it went, the no-read hold which box's card the reader missed.

The dealer's screen says it: :func:`controller.web.dealer.dealer_view`'s hold title."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from controller.games.cards import Card
from controller.table import commands as cmd
from controller.web.dealer import RoundNotes, dealer_view
from controller.web.dealer_words import box_words, card_words, held_words, hold_subject
from firmware_sim.faults import FaultKind, FaultSpec
from tests.controller.service.document_sim import DocumentShuffler
from tests.controller.service.operator_rig import Rig, running


def test_the_exposed_card_hold_names_the_card_and_the_box() -> None:
    assert held_words("exposed_card (RWS-3CP 5.1.2)", card="TD", box="3") == (
        "10♦ was exposed at box 3", "RWS-3CP 5.1.2")
    assert held_words("exposed_card (X)", card="QS KD", box="dealer")[0] == \
        "Q♠ K♦ were exposed in the dealer's hand"
    assert held_words("exposed_card (X)", card="AS")[0] == "A♠ was exposed"
    assert held_words("exposed_card (X)")[0] == "A card was exposed"


def test_the_no_read_hold_names_the_box() -> None:
    assert held_words("no_read (RWS-NC3P 5.2)", box="2") == (
        "The card for box 2 could not be read", "RWS-NC3P 5.2")
    assert held_words("no_read (LIVE-3P T&C 4)", box="banker", dealer="banker")[0] == \
        "The card for the dealer's hand could not be read"
    assert held_words("no_read (X)")[0] == "A card could not be read"


def test_words_for_cards_and_positions() -> None:
    assert card_words("TD") == "10♦" and card_words("10h") == "10♥"
    assert card_words("not a card") == "not a card"
    assert [box_words(p, "dealer") for p in ("3", "dealer", "p2", "banker")] == [
        "box 3", "the dealer's hand", "Player 2", "the Banker"]


def test_hold_subject_never_names_a_card_the_screen_may_not_see() -> None:
    """The dealer's face-down card arrives redacted (``card: null``): no box is named from it."""
    events = [{"type": "CardAssigned", "card": None, "position": "dealer"},
              {"type": "DealingError", "kind": "exposed_card", "detail": "shuffler: lid"}]
    assert hold_subject("exposed_card", events) == (None, None)
    assert hold_subject("no_read", [{"type": "DealingError", "kind": "no_read",
                                     "detail": "card not identified"}]) == (None, None)


def _json(event: Mapping[str, Any]) -> dict[str, Any]:
    def value(v: Any) -> Any:
        if isinstance(v, Card):
            return v.code
        if isinstance(v, (list, tuple)):
            return [value(x) for x in v]
        return v.value if hasattr(v, "value") and not isinstance(v, (str, int)) else v
    return {k: value(v) for k, v in event.items()}


@pytest.fixture(name="rig")
def fixture_rig(tmp_path: Path) -> Iterator[Rig]:
    with running(Rig(tmp_path, "rws-three-card-poker", sim=DocumentShuffler())) as rig:
        yield rig


def test_a_real_exposed_card_hold_in_words(rig: Rig) -> None:
    """Through the service's wiring and the shuffler simulator: a set dispensed with an exposed
    card; the round's events name the card (``DealingError.detail``) and its box
    (``CardAssigned``), and the hold's words say both."""
    rig.sim.inject(FaultSpec(FaultKind.EXPOSED))
    rig.open_and_close(1)
    rig.wait("SupervisorRequired", where=lambda e: e["kind"] == "exposed_card")
    events = [_json(e) for e in rig.published]
    card, box = hold_subject("exposed_card", events)
    assert card is not None and box is not None, events
    assigned = [e for e in events if e.get("type") == "CardAssigned"
                and e.get("card") in card.split()]
    assert {e["position"] for e in assigned} == {box}
    words, clause = held_words(rig.status()["held_for"], card=card, box=box)
    assert words == f"{card_words(card)} {'were' if ' ' in card else 'was'} exposed at " \
        f"{box_words(box)}" and clause
    notes = RoundNotes()
    for event in events:
        notes = notes.noted(event)
    view = dealer_view(rig.status(), notes=notes)
    assert view["hold"]["title"] == words, view["hold"]
    rig.send(cmd.SupervisorDecision(actor="supervisor:test", role=cmd.Role.SUPERVISOR,
                                    action=cmd.SupervisorAction.CONTINUE))


def test_the_dealers_exposed_card_report_names_the_box(rig: Rig) -> None:
    """Issue 36: a card the dealer saw exposed, reported at a box (the screen's Report, which
    box), holds the round; the hold says which box ("A card was exposed at box N"), since the
    table knows the box from the report though not the card."""
    rig.open_and_close(1)
    rig.until(lambda: rig.status()["state"] in ("decisions", "dealt"), what="the deal")
    box = next(p for p, cards in rig.status()["hands"].items() if p != "dealer" and cards)
    rig.send(cmd.ReportIrregularity(actor="dealer:test", role=cmd.Role.DEALER,
                                    kind=cmd.IrregularityKind.EXPOSED_CARD, position=box,
                                    source=cmd.Source.DEALER))
    rig.wait("SupervisorRequired", where=lambda e: e["kind"] == "exposed_card")
    events = [_json(e) for e in rig.published]
    assert hold_subject("exposed_card", events) == (None, box)
    notes = RoundNotes()
    for event in events:
        notes = notes.noted(event)
    view = dealer_view(rig.status(), notes=notes)
    assert view["hold"]["title"] == f"A card was exposed at {box_words(box)}", view["hold"]
