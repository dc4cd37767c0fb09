"""Issue 23, finding 9: the ledger's statistical "a card stuck inside or missing" finding,
driven through the service's own wiring (the real ``Wiring``, its guard and journal) against a
shuffler with a stuck card served on a real pty.

The finding is decided when the next shuffle closes the deck, that is just after "No more
bets", with no card of the round dealt. It is a doubt about the count, not a count: MBS-R3P 5.9
has the dealer count the cards and voids only if "the count proves to have too many or too few
cards". So the deck is blocked, the round just closed is not voided, and the count rules.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from controller.games.catalog import get_game
from controller.journal import iter_records
from controller.journal.replay import replay_records
from controller.table import commands as cmd
from firmware_sim.shuffler import ShufflerSim
from tests.controller.service.operator_rig import DEALER, Rig

COUNT_CLAUSE = {"rws-nc-three-pictures": "RWS-NC3P 5.5.2", "mbs-three-pictures": "MBS-3P 5.2",
                "mbs-royal-three-pictures": "MBS-R3P 5.1, 5.9",
                "rws-three-card-poker": "RWS-3CP 5.1.3"}
"""The four games a shuffler deals (the audit's four), each with its deck-count clause."""
MAX_ROUNDS = 40
"""Bound on the rounds dealt before the finding. A wager at every box: eight boxes and the
dealer take 27 cards a deck (RWS-3CP: seven, 24), so the stuck card's run of unseen decks
crosses the ledger's limit (1e-4 / 52) at the 18th deck (22nd), decided at the next shuffle."""


@pytest.fixture(name="rig")
def fixture_rig(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Rig]:
    sim = ShufflerSim(seed=5, shuffle_seconds=0.0, dispense_seconds=0.0, take_seconds=None,
                      shuffle_model="stuck-card")
    rig = Rig(tmp_path, getattr(request, "param", "mbs-royal-three-pictures"), sim=sim)
    rig.start()
    try:
        rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline")
        yield rig
    finally:
        rig.close()


def _open_and_close(rig: Rig, number: int) -> None:
    """A round with a wager at every box, so each deck shows 27 of its cards."""
    rules = get_game(rig.game)
    rig.send(cmd.OpenRound(**DEALER))
    for box in rules.positions:
        rig.send(cmd.PlaceWager(**DEALER, wager_id=f"r{number}-{box}", position=box,
                                bet=rules.initial_bet or "ante", amount=500))
    rig.send(cmd.CloseBets(**DEALER))


def _deal_until_the_finding(rig: Rig) -> tuple[int, Mapping[str, Any]]:
    """Deal and settle rounds until a round ends its "No more bets" with the deck blocked;
    returns that round's number and the alert."""
    for number in range(1, MAX_ROUNDS + 1):
        _open_and_close(rig, number)
        ended = rig.wait("DealComplete", "ProtectionAlert", timeout=30.0)
        if ended["type"] == "ProtectionAlert":
            return number, ended
        assert rig.finish()[-1]["type"] == "RoundSettled"
    raise AssertionError(f"no ledger finding in {MAX_ROUNDS} rounds of a stuck-card shuffler")


@pytest.mark.parametrize("rig", list(COUNT_CLAUSE), indirect=True)
def test_stuck_card_finding_blocks_for_a_count_and_52_deals_the_round(rig: Rig) -> None:
    """MBS-R3P 5.9, in the four shuffler games: the statistical finding blocks the deck
    (``DeckBlocked`` naming the game's count clause) and the round just closed, no card dealt,
    is NOT voided; nothing is dealt until the count; ``deck counted 52`` releases it and the
    same round deals and settles. The journal replays."""
    number, alert = _deal_until_the_finding(rig)
    clause = COUNT_CLAUSE[rig.game]
    assert (alert["monitor"], alert["held"], alert["clause"]) == ("ledger", True, clause)
    assert "stuck inside or missing" in alert["detail"]
    blocked = rig.wait("DeckBlocked")
    assert blocked["clause"] == clause
    rig.until(lambda: rig.operator()["waits_for"] == "a replaced or counted deck",
              what="the operator waiting for the count", timeout=30.0)
    status = rig.status()
    assert (status["round"], status["state"], status["hands"]) == (number, "closed", {})
    assert status["deck_blocked"].startswith("ledger: ")
    assert not any(e["type"] in ("RoundVoided", "IrregularityRuled", "SupervisorRequired")
                   for e in rig.published if e.get("round") == number)

    released = rig.send(cmd.DeckCounted(**DEALER, count=52))
    assert [e["type"] for e in released] == ["DeckReleased"]
    rig.wait("DealComplete", timeout=30.0)
    assert all(len(cards) == 3 for cards in rig.status()["hands"].values())
    assert rig.finish()[-1]["type"] == "RoundSettled"
    assert rig.status()["round"] == number
    rig.close_service()
    records = list(iter_records([rig.tmp / "journal"]))
    assert replay_records(records).divergences == []


def test_stuck_card_finding_then_a_wrong_count_is_ruled_by_the_count_clause(rig: Rig) -> None:
    """The count decides: 51 cards counted after the finding is a shortage, and the round waiting
    on the count is void under the game's deck-count clause (MBS-R3P 5.1, 5.9); the deck stays
    blocked for a replacement."""
    number, _ = _deal_until_the_finding(rig)
    rig.wait("DeckBlocked")
    counted = rig.send(cmd.DeckCounted(**DEALER, count=51))
    voided = [e for e in counted if e["type"] == "RoundVoided"]
    assert voided and voided[0]["clause"] == "MBS-R3P 5.1, 5.9", counted
    status = rig.status()
    assert (status["round"], status["state"]) == (number, "voided")
    assert status["deck_blocked"] == "manual count gives 51 cards, not 52"
