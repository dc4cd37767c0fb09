"""Issue 23, findings 4 and 5, through the service's own wiring (the real ``Wiring`` as
``tablectl run`` builds it, a shuffler served on a real pty): a ruling that reconstructs or
removes hands always leaves a round that can be settled or voided, and nothing the revealed
hands have decided is taken back, neither by a void nor by options opened after the reveal."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from controller.games.cards import parse_card
from controller.table import commands as cmd
from firmware_sim.faults import FaultKind, FaultSpec
from tests.controller.service.document_sim import DocumentShuffler
from tests.controller.service.operator_rig import DEALER, SUPERVISOR, Rig

A = cmd.SupervisorAction
K = cmd.IrregularityKind
SHORT_BOX = {"rws-nc-three-pictures": "RWS-NC3P 5.9", "rws-three-card-poker": "RWS-3CP 5.1.4"}
"""The clause a set of two to box 1 is held under: 5.9 (reconstruct, else the hand is removed),
5.1.4 (dealt incorrectly before handling: complete hands moved, else void)."""


@pytest.fixture(name="rig")
def fixture_rig(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Rig]:
    rig = Rig(tmp_path, getattr(request, "param", "rws-nc-three-pictures"),
              sim=DocumentShuffler())
    rig.start()
    try:
        rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline")
        yield rig
    finally:
        rig.close()


def results(event: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """wager id -> (outcome, rule) of a published RoundSettled / RoundVoided."""
    return {r["wager_id"]: (r["outcome"], r["rule"]) for r in event["settlement"]["results"]}


def refusal(out: list[Mapping[str, Any]]) -> str:
    assert out and out[-1]["type"] == "CommandRefused", out
    return str(out[-1]["reason"])


def open_round(rig: Rig, wagers: list[tuple[str, str, int]]) -> None:
    rig.send(cmd.OpenRound(**DEALER))
    for index, (position, bet, amount) in enumerate(wagers):
        rig.send(cmd.PlaceWager(**DEALER, wager_id=f"w1-{index}", position=position, bet=bet,
                                amount=amount))
    rig.send(cmd.CloseBets(**DEALER))


def dealt_and_revealed(rig: Rig) -> None:
    rig.wait("DealComplete")
    for position in rig.status().get("decisions_due", []):
        rig.send(cmd.PlayerDecision(**DEALER, position=position, choice=cmd.Choice.PLAY))
    rig.send(cmd.RevealDealer(**DEALER))
    assert rig.status()["state"] == "revealed"


# -- finding 4: a reconstruction that leaves a box without a hand of three cards -----------

@pytest.mark.parametrize("rig", sorted(SHORT_BOX), indirect=True)
def test_a_bare_reconstruct_of_a_short_box_is_refused_and_the_round_still_ends(rig: Rig
                                                                              ) -> None:
    """Box 1 is given a set of two. A bare ``reconstruct`` (no hands, no moves) used to resume
    the round with two cards in box 1: RWS-NC3P then refused to settle ("no hand for '1'"),
    RWS-3CP took a Play on the two cards. Now it is refused, naming the box, the clause and what
    the supervisor must give; the hold stays, and its other answer ends the round by the
    clause: RWS-NC3P 5.9 removes only that hand (its bets returned, box 2 settled), RWS-3CP
    5.1.4 voids (not reconstructable by moving complete hands)."""
    clause = SHORT_BOX[rig.game]
    rig.sim.inject(FaultSpec(FaultKind.SET_OF_TWO))
    rig.open_and_close(1)
    held = rig.wait("SupervisorRequired", where=lambda e: e["kind"] in (
        "wrong_count_player", "dealt_incorrectly"))
    assert held["clause"] == clause and "reconstruct" in held["options"]
    reason = refusal(rig.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.RECONSTRUCT)))
    assert "box 1 with 2 cards" in reason and clause in reason
    assert "hands" in reason and "not_reconstructable" in reason
    assert rig.status()["state"] == "hold"
    rig.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.NOT_RECONSTRUCTABLE))
    if rig.game == "rws-three-card-poker":
        voided = rig.wait("RoundVoided")
        assert voided["clause"] == clause
        assert {o for o, _ in results(voided).values()} == {"returned"}
        return
    rig.wait("HandRemoved", where=lambda e: e["position"] == "1")
    rig.wait("DealComplete")
    rig.finish()
    settled = results(rig.wait("RoundSettled"))
    assert settled["w1-0"][0] == "returned" and settled["w1-0"][1].startswith("RWS-NC3P 5.9")
    assert settled["w1-1"][0] in ("win", "lose", "push")


def test_a_set_of_four_is_reconstructed_by_the_hands_the_supervisor_gives(rig: Rig) -> None:
    """RWS-NC3P 5.9 with 1.13: box 1 got four cards. A bare ``reconstruct`` is refused (box 1
    with 4 cards); ``hands`` giving box 1 its first three cards is the reconstruction the
    refusal asks for, and the round deals on and settles with that hand."""
    rig.sim.inject(FaultSpec(FaultKind.SET_OF_FOUR))
    rig.open_and_close(1)
    rig.wait("SupervisorRequired", where=lambda e: e["kind"] == "wrong_count_player")
    reason = refusal(rig.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.RECONSTRUCT)))
    assert "box 1 with 4 cards" in reason
    four = [parse_card(code) for code in rig.status()["hands"]["1"]]
    assert len(four) == 4
    out = rig.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.RECONSTRUCT,
                                          hands=(("1", tuple(four[:3])),)))
    assert out[-1]["type"] != "CommandRefused", out
    rig.wait("DealComplete")
    rig.finish()
    settled = rig.wait("RoundSettled")
    hands = dict((position, cards) for position, cards in settled["hands"])
    assert [parse_card(c) for c in hands["1"]] == four[:3]
    assert {o for o, _ in results(settled).values()} <= {"win", "lose", "push"}


def test_a_void_after_the_reveal_does_not_return_a_decided_bet(rig: Rig) -> None:
    """A supervisor's void after the dealer's hand is revealed (no clause voids here: RWS-NC3P
    5.17) returned every bet, a bet already lost to the revealed hand included. The revealed
    hands decide every box holding three cards, and no clause takes a decided bet back (1.19: a
    void has "no result"; 5.4.1: an established outcome is concluded): those bets stand."""
    rig.open_and_close(1)
    dealt_and_revealed(rig)
    out = rig.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="pit decision"))
    assert out[-1]["type"] != "CommandRefused", out
    voided = rig.wait("RoundVoided")
    assert voided["clause"] == "RWS-NC3P 5.17"
    decided = results(voided)
    assert set(decided) == {"w1-0", "w1-1"}
    assert all(outcome != "returned" for outcome, _ in decided.values()), decided
    assert rig.status()["state"] == "voided"


# -- finding 5: options after the reveal ---------------------------------------------------

@pytest.mark.parametrize(("rig", "kind", "clause"), [
    ("rws-nc-three-pictures", K.OTHER_DEALING_ERROR, "RWS-NC3P 5.7, 5.8"),
    ("rws-nc-three-pictures", K.DEALT_INCORRECTLY, "RWS-NC3P 5.7, 5.8"),
    ("mbs-royal-three-pictures", K.DEALT_INCORRECTLY, "MBS-R3P 5.6, 5.7, 5.3"),
], indirect=["rig"])
def test_a_dealing_error_after_the_reveal_opens_no_options(rig: Rig, kind: K,
                                                            clause: str) -> None:
    """A dealing error reported after the reveal used to open the options (RWS-NC3P 5.7,
    MBS-R3P 5.7) and the losing boxes withdrew their stakes. The options are a choice made
    before the outcome, and no wager may be withdrawn after "No more bets" (RWS-NC3P 5.8,
    MBS-R3P 5.3: "won or lost based on the outcomes"): after the reveal the round is settled as
    dealt, and a withdrawal is refused."""
    open_round(rig, [("1", "main", 500), ("2", "main", 1000)])
    dealt_and_revealed(rig)
    rig.send(cmd.ReportIrregularity(**DEALER, kind=kind, handled=True, details="audit"))
    ruled = rig.wait("IrregularityRuled", where=lambda e: e["kind"] == kind.value)
    assert (ruled["action"], ruled["clause"]) == ("continue", clause)
    assert rig.status()["state"] == "revealed"
    refusal(rig.send(cmd.PlayerOption(**DEALER, position="1", option=cmd.Option.WITHDRAW)))
    rig.send(cmd.SettleRound(**DEALER))
    settled = results(rig.wait("RoundSettled"))
    assert all(outcome != "returned" for outcome, _ in settled.values()), settled


@pytest.mark.parametrize("rig", ["mbs-royal-three-pictures"], indirect=True)
def test_a_wrong_count_found_after_the_reveal_removes_the_hand_without_options(rig: Rig
                                                                             ) -> None:
    """MBS-R3P 5.5 still removes the hand after the reveal ("noticed before the commencement of
    play of the next round"), but the 5.7 withdrawal for the others is not offered: their bets
    are decided. Box 1 is returned under 5.5, box 2 settled."""
    open_round(rig, [("1", "main", 500), ("2", "main", 1000)])
    dealt_and_revealed(rig)
    rig.send(cmd.ReportIrregularity(**DEALER, kind=K.WRONG_COUNT_PLAYER, position="1",
                                    handled=True))
    rig.wait("HandRemoved", where=lambda e: e["position"] == "1")
    assert rig.status()["state"] == "revealed"
    rig.send(cmd.SettleRound(**DEALER))
    settled = results(rig.wait("RoundSettled"))
    assert settled["w1-0"][0] == "returned" and settled["w1-0"][1].startswith("MBS-R3P 5.5")
    assert settled["w1-1"][0] != "returned"


# -- found by the liveness property: options opened mid-deal --------------------------------

def test_options_opened_twice_mid_deal_then_closed_let_the_deal_go_on(rig: Rig) -> None:
    """RWS-NC3P 5.7 mid-deal: the dealer exposes a card (options), then another while the
    options are open. The second error used to be refused ("Can't trigger offer_options from
    OPTIONS") after being ruled; now every box chooses again on the same open options. Closing
    them (``CloseOptions``) emitted nothing, so the device operator, which follows the round by
    its events, kept waiting for the options and never dealt the rest: now the players still to
    choose continue, named in a ``PlayerOptionsClosed``, and the deal goes on to settlement."""
    rig.auto_take = False  # box 1's hand stays presented: the deal waits for the dealer
    rig.open_and_close(1)
    rig.wait("HandComplete", where=lambda e: e["position"] == "1")
    for _ in range(2):
        out = rig.send(cmd.ReportIrregularity(**DEALER, kind=K.EXPOSED_CARD,
                                              source=cmd.Source.DEALER, details="dealer"))
        assert [e["type"] for e in out][-1] == "PlayerOptionsOffered", out
        assert rig.status()["state"] == "options"
    rig.auto_take = True
    rig.sim.take_hand()
    closed = rig.send(cmd.CloseOptions(**DEALER))
    assert [e["type"] for e in closed][0] == "PlayerOptionsClosed", closed
    assert len(closed[0]["continuing"]) == 2, closed
    rig.wait("DealComplete")
    rig.finish()
    settled = results(rig.wait("RoundSettled"))
    assert all(outcome != "returned" for outcome, _ in settled.values()), settled
