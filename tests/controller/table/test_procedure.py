"""Deal order and which boxes receive cards (controller.table.procedure)."""

from __future__ import annotations

from controller.games.catalog import LIVE_3P, MBS_R3P, RWS_3CP, RWS_NC3P
from controller.settlement.model import Wager
from controller.table.layout import DealingDevice
from controller.table.procedure import burn_cards, deal_plan, receiving_boxes


def test_shuffler_sets_go_clockwise_then_dealer() -> None:
    """RWS-NC3P 3.12.1, MBS-R3P 3.12, RWS-3CP 3.7: a set of three to each box from the dealer's
    immediate left (box 1) clockwise, then the dealer's set."""
    plan = deal_plan(RWS_NC3P, DealingDevice.SHUFFLER, ("2", "5", "7"))
    assert [(s.position, s.cards) for s in plan] == [("2", 3), ("5", 3), ("7", 3), ("dealer", 3)]


def test_manual_shoe_deals_one_card_at_a_time_three_rounds() -> None:
    """RWS-NC3P 3.12, MBS-R3P 3.12.1, RWS-3CP 3.6: one card to each box then the dealer, until
    each has three."""
    plan = deal_plan(MBS_R3P, DealingDevice.SHOE, ("1", "3"))
    assert [s.position for s in plan] == ["1", "3", "dealer"] * 3
    assert [s.turn for s in plan] == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert all(s.cards == 1 for s in plan)


def test_live_burns_four_then_p1_p2_p3_banker() -> None:
    """LIVE-3P T&C 1 (4 burn cards) and Game Play (P1 -> P2 -> P3 -> Banker, one at a time)."""
    receiving = receiving_boxes(LIVE_3P, LIVE_3P.positions, ())
    assert receiving == ("p1", "p2", "p3")
    plan = deal_plan(LIVE_3P, DealingDevice.LIVE, receiving)
    assert [s.position for s in plan] == ["p1", "p2", "p3", "banker"] * 3
    assert burn_cards(DealingDevice.LIVE) == 4
    assert burn_cards(DealingDevice.SHUFFLER) == burn_cards(DealingDevice.SHOE) == 0


def test_boxes_without_an_initial_wager_receive_nothing() -> None:
    """RWS-NC3P 3.12: cards go only to boxes where an Initial Bet has been placed."""
    wagers = [Wager("a", "3", "main", 100), Wager("b", "1", "main", 100)]
    assert receiving_boxes(RWS_NC3P, RWS_NC3P.positions, wagers) == ("1", "3")


def test_pair_plus_only_box_receives_cards_in_three_card_poker() -> None:
    """RWS-3CP 3.3 (Ante, Pair Plus or both to participate) and 3.8.2 (Pair-Plus-only players
    place their cards): a Pair-Plus-only box is dealt a hand."""
    wagers = [Wager("a", "4", "pair_plus", 100), Wager("b", "2", "ante", 100)]
    assert receiving_boxes(RWS_3CP, RWS_3CP.positions, wagers) == ("2", "4")


def test_layout_boxes_limit_receiving() -> None:
    """Only boxes on this table's layout (configuration) are dealt."""
    wagers = [Wager("a", "1", "main", 100), Wager("b", "8", "main", 100)]
    assert receiving_boxes(RWS_NC3P, ("1", "2", "3"), wagers) == ("1",)
