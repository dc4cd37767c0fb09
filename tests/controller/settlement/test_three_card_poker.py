"""Settlement of RWS Three Card Poker: Ante, Play, Pair Plus, Ante Bonus, Progressive Jackpot
and Envy Bonus (RWS-3CP 3.3-3.13, 4.1-4.4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.errors import WagerError
from controller.games import hands as hand_values
from controller.games.cards import FULL_DECK, Card, parse_cards
from controller.games.catalog import get_game
from controller.settlement import (
    Outcome,
    ProgressiveConfig,
    Result,
    RoundInput,
    Settlement,
    TableMemory,
    Wager,
    settle,
)

GAME = "rws-three-card-poker"
PAIR_PLUS = {"straight_flush": 40, "three_of_a_kind": 30, "straight": 5, "flush": 4, "pair": 1}
ANTE_BONUS = {"straight_flush": 5, "three_of_a_kind": 4, "straight": 1}
# RWS-3CP 4.4 in minor units (cents): "$1250", "$175", "$150", "$15"; Envy "$250", "$50".
AKQ_SUITED, STRAIGHT_FLUSH, TRIPS, STRAIGHT = 125_000, 17_500, 15_000, 1_500
ENVY_AKQ_SPADES, ENVY_AKQ_SUITED = 25_000, 5_000
PROGRESSIVE_STAKE = 500  # the documented default stake (ProgressiveConfig)
STRAIGHT_PROGRESSIVE = 1_500  # RWS-3CP 4.4 "Straights $15", in cents

QUALIFYING_DEALER = "Q♣ 7♦ 3♦"      # Queen-high: qualifies (3.9, 3.10)
NON_QUALIFYING_DEALER = "J♣ 8♦ 5♠"  # Jack-high: does not qualify (3.9)


def cards(text: str) -> tuple[Card, ...]:
    return parse_cards(text.split())


def run_round(hands: Mapping[str, str], wagers: Sequence[Wager], jackpot: int = 0,
              progressive: ProgressiveConfig = ProgressiveConfig()) -> Settlement:
    return settle(RoundInput(rules=get_game(GAME),
                             hands={pos: cards(text) for pos, text in hands.items()},
                             wagers=tuple(wagers),
                             memory=TableMemory(progressive_jackpot=jackpot),
                             progressive=progressive))


def run(hands: Mapping[str, str], wagers: Sequence[Wager], jackpot: int = 0) -> dict[str, Result]:
    return run_round(hands, wagers, jackpot).by_id()


def plays(position: str, amount: int = 100, **extra: int) -> list[Wager]:
    """Ante and an equal Play (3.8.2), plus any side wagers given as bet=amount."""
    wagers = [Wager(f"ante{position}", position, "ante", amount),
              Wager(f"play{position}", position, "play", amount)]
    wagers += [Wager(f"{bet}{position}", position, bet, value) for bet, value in extra.items()]
    return wagers


# --- Ante and Play ------------------------------------------------------------------------


def test_player_beats_qualifying_dealer() -> None:
    """Dealer qualifies and the player is higher: Ante and Play paid 1 to 1 (3.10.1, 4.1)."""
    results = run({"1": "K♠ K♥ 2♦", "dealer": QUALIFYING_DEALER}, plays("1"))
    assert (results["ante1"].outcome, results["ante1"].net) == (Outcome.WIN, 100)
    assert (results["play1"].outcome, results["play1"].net) == (Outcome.WIN, 100)


def test_queen_high_qualifies_and_beats_jack_high() -> None:
    """Queen-high qualifies; a lower player hand loses Ante and Play (3.10, 3.10.2)."""
    results = run({"1": "J♠ 10♥ 8♦", "dealer": QUALIFYING_DEALER}, plays("1"))
    assert (results["ante1"].outcome, results["ante1"].net) == (Outcome.LOSE, -100)
    assert (results["play1"].outcome, results["play1"].net) == (Outcome.LOSE, -100)


@pytest.mark.parametrize("player", ["9♠ 7♥ 4♦", "A♠ K♥ 10♦"], ids=["player-lower", "higher"])
def test_dealer_not_qualifying_pays_ante_and_pushes_play(player: str) -> None:
    """Jack-high does not qualify: Ante paid 1 to 1 and no payment on Play, whichever hand is
    higher (3.9, 3.9.1, 3.9.2)."""
    results = run({"1": player, "dealer": NON_QUALIFYING_DEALER}, plays("1"))
    assert (results["ante1"].outcome, results["ante1"].net) == (Outcome.WIN, 100)
    assert results["play1"].outcome is Outcome.PUSH
    assert results["play1"].net == 0


def test_stand_off_pushes_ante_and_play() -> None:
    """Equal poker ranking after all three cards: a Stand-Off on Ante and Play (3.5.4,
    3.10.3)."""
    results = run({"1": "A♠ K♥ J♦", "dealer": "A♣ K♠ J♥"}, plays("1"))
    assert (results["ante1"].outcome, results["ante1"].net) == (Outcome.PUSH, 0)
    assert (results["play1"].outcome, results["play1"].net) == (Outcome.PUSH, 0)


def test_third_card_decides() -> None:
    """First two cards tie, the subsequent card decides the winner (3.5.4; 3.5.3 c)."""
    results = run({"1": "A♠ K♥ J♦", "dealer": "A♣ K♠ 10♥"}, plays("1"))
    assert results["ante1"].net == 100
    assert results["play1"].net == 100


def test_play_must_equal_ante() -> None:
    """The Play wager is equal to the Ante (Definitions "Play"; 3.8.2): anything else is
    refused."""
    with pytest.raises(WagerError, match="3.8.2"):
        run({"1": "K♠ K♥ 2♦", "dealer": QUALIFYING_DEALER},
            [Wager("a", "1", "ante", 100), Wager("p", "1", "play", 50)])


# --- fold and pair plus only --------------------------------------------------------------


def test_fold_loses_ante_and_pair_plus() -> None:
    """A fold loses both the Ante and the Pair Plus, even holding a pair and against a dealer
    who does not qualify (3.8.1)."""
    results = run({"1": "10♠ 10♥ K♦", "dealer": NON_QUALIFYING_DEALER},
                  [Wager("a", "1", "ante", 100), Wager("pp", "1", "pair_plus", 50)])
    assert (results["a"].outcome, results["a"].net) == (Outcome.LOSE, -100)
    assert (results["pp"].outcome, results["pp"].net) == (Outcome.LOSE, -50)


def test_fold_earns_no_ante_bonus() -> None:
    """The Ante Bonus is paid to a player who plays; a folded straight loses its Ante (3.8.1,
    4.3)."""
    results = run({"1": "6♠ 5♥ 4♦", "dealer": QUALIFYING_DEALER}, [Wager("a", "1", "ante", 100)])
    assert results["a"].net == -100


def test_pair_plus_only_makes_no_decision() -> None:
    """A player with only Pair Plus makes no decision and is paid on his own hand, even though
    the dealer's hand is higher (3.8.2, 3.10.4, 4.2)."""
    results = run({"1": "10♠ 10♥ K♦", "dealer": "A♠ A♥ 3♣"}, [Wager("pp", "1", "pair_plus", 50)])
    assert (results["pp"].outcome, results["pp"].net) == (Outcome.WIN, 1 * 50)


# --- pair plus and ante bonus -------------------------------------------------------------

PAIR_PLUS_HANDS = [
    ("8♥ 7♥ 6♥", "straight_flush"), ("10♠ 10♥ 10♣", "three_of_a_kind"),
    ("8♦ 7♣ 6♥", "straight"), ("A♠ 2♣ 3♥", "straight"), ("K♥ J♥ 9♥", "flush"),
    ("10♠ 10♥ K♦", "pair"), ("6♠ 4♥ 2♦", None),
]


@pytest.mark.parametrize(("hand", "line"), PAIR_PLUS_HANDS, ids=[h for h, _ in PAIR_PLUS_HANDS])
@pytest.mark.parametrize("with_ante", [False, True], ids=["pair-plus-only", "playing"])
def test_pair_plus_pay_table(hand: str, line: str | None, with_ante: bool) -> None:
    """Pair Plus pays 40/30/5/4/1 to 1 irrespective of the dealer's hand and loses on a high
    card (4.2, 3.9.3, 3.10.4)."""
    wagers = [Wager("pp", "1", "pair_plus", 10)] + (plays("1") if with_ante else [])
    results = run({"1": hand, "dealer": "A♣ A♦ A♥"}, wagers)
    if line is None:
        assert (results["pp"].outcome, results["pp"].net) == (Outcome.LOSE, -10)
    else:
        assert (results["pp"].outcome, results["pp"].net) == (Outcome.WIN, PAIR_PLUS[line] * 10)


def test_ante_bonus_straight_flush_with_dealer_not_qualifying() -> None:
    """Straight flush, dealer not qualifying: Ante 1 to 1 plus Ante Bonus 5 to 1; Play gets
    no payment (3.9.1-3.9.3, 4.1, 4.3)."""
    results = run({"1": "8♥ 7♥ 6♥", "dealer": NON_QUALIFYING_DEALER}, plays("1"))
    assert results["ante1"].net == 100 + ANTE_BONUS["straight_flush"] * 100
    assert results["play1"].net == 0


def test_ante_bonus_paid_even_when_dealer_wins() -> None:
    """Three of a kind losing to higher trips still earns the 4 to 1 Ante Bonus: the bonus is
    paid irrespective of the dealer's hand (3.10.4, 4.3)."""
    results = run({"1": "5♠ 5♥ 5♦", "dealer": "9♠ 9♥ 9♦"}, plays("1"))
    assert results["ante1"].net == -100 + ANTE_BONUS["three_of_a_kind"] * 100
    assert results["play1"].net == -100
    labels = [c.label for c in results["ante1"].components]
    assert any("bonus" in label for label in labels)


def test_ante_bonus_straight_against_straight_flush() -> None:
    """A straight losing to a straight flush: Ante collected, Ante Bonus 1 to 1 paid, so the
    Ante nets zero; Play lost (3.10.2, 3.10.4, 4.3)."""
    results = run({"1": "6♠ 5♥ 4♦", "dealer": "J♣ 10♣ 9♣"}, plays("1"))
    assert results["ante1"].net == -100 + ANTE_BONUS["straight"] * 100
    assert results["play1"].net == -100


def test_ante_bonus_straight_winning() -> None:
    """A straight beating a qualifying dealer: Ante 1 to 1 + bonus 1 to 1, Play 1 to 1 (3.10.1,
    4.1, 4.3)."""
    results = run({"1": "6♠ 5♥ 4♦", "dealer": "K♠ K♥ 2♣"}, plays("1"))
    assert results["ante1"].net == 100 + 100
    assert results["play1"].net == 100


def test_no_ante_bonus_for_a_flush() -> None:
    """The Ante Bonus table stops at a straight: a winning flush is paid 1 to 1 only (4.3)."""
    results = run({"1": "K♥ J♥ 9♥", "dealer": QUALIFYING_DEALER}, plays("1"))
    assert results["ante1"].net == 100


# --- progressive (3.4, 3.11, 4.4) -----------------------------------------------------------


def test_progressive_without_ante_is_returned() -> None:
    """The Progressive may be wagered only with an Ante (3.4): without one it is returned."""
    results = run({"1": "J♥ 10♥ 9♥", "dealer": QUALIFYING_DEALER},
                  [Wager("pp", "1", "pair_plus", 10),
                   Wager("prog", "1", "progressive", PROGRESSIVE_STAKE)])
    assert (results["prog"].outcome, results["prog"].net) == (Outcome.RETURNED, 0)
    assert "3.4" in results["prog"].rule
    assert results["pp"].net == 40 * 10


PROGRESSIVE_LINES = [
    ("A♥ K♥ Q♥", AKQ_SUITED, "AKQ hearts"),
    ("A♦ K♦ Q♦", AKQ_SUITED, "AKQ diamonds"),
    ("A♣ K♣ Q♣", AKQ_SUITED, "AKQ clubs"),
    ("8♥ 7♥ 6♥", STRAIGHT_FLUSH, "straight flush"),
    ("3♠ 2♠ A♠", STRAIGHT_FLUSH, "low straight flush in spades"),
    ("10♠ 10♥ 10♣", TRIPS, "three of a kind"),
    ("8♦ 7♣ 6♥", STRAIGHT, "straight"),
    ("A♠ K♥ Q♦", STRAIGHT, "AKQ offsuit is a straight"),
    ("K♥ J♥ 9♥", None, "flush"),
    ("10♠ 10♥ K♦", None, "pair"),
]


@pytest.mark.parametrize(("hand", "pays", "why"), PROGRESSIVE_LINES,
                         ids=[p[2] for p in PROGRESSIVE_LINES])
def test_progressive_pay_table(hand: str, pays: int | None, why: str) -> None:
    """Each fixed line of 4.4, paid irrespective of the dealer (3.11); 4.4's sums are paid for
    the stake (the documented reading, ProgressiveConfig), so the net is sum - stake."""
    dealer = "J♣ 10♣ 9♣" if "♣" not in hand else "J♦ 10♦ 9♦"
    results = run({"1": hand, "dealer": dealer},
                  plays("1", progressive=PROGRESSIVE_STAKE), jackpot=1_000_000)
    result = results["progressive1"]
    if pays is None:
        assert (result.outcome, result.net) == (Outcome.LOSE, -PROGRESSIVE_STAKE)
    else:
        assert (result.outcome, result.net) == (Outcome.WIN, pays - PROGRESSIVE_STAKE)


def test_akq_spades_wins_the_whole_jackpot_and_resets_the_meter() -> None:
    """AKQ of spades wins 100% of the Progressive Jackpot (4.4), then the meter starts again
    from its seed (issue 2: persisted jackpot meter)."""
    settlement = run_round({"1": "A♠ K♠ Q♠", "dealer": QUALIFYING_DEALER},
                           plays("1", progressive=PROGRESSIVE_STAKE), jackpot=1_000_000,
                           progressive=ProgressiveConfig(seed=50_000))
    result = settlement.by_id()["progressive1"]
    assert (result.outcome, result.net) == (Outcome.WIN, 1_000_000 - PROGRESSIVE_STAKE)
    assert settlement.memory.progressive_jackpot == 50_000


def test_meter_persists_and_grows_without_a_jackpot() -> None:
    """Without AKQ of spades the meter carries over, plus its contribution from this round's
    progressive wagers (4.4; ProgressiveConfig.contribution_per_mille)."""
    config = ProgressiveConfig(contribution_per_mille=100)
    hands = {"1": "K♥ J♥ 9♥", "2": "6♠ 4♥ 2♦", "dealer": QUALIFYING_DEALER}
    wagers = plays("1", progressive=PROGRESSIVE_STAKE) + plays("2", progressive=PROGRESSIVE_STAKE)
    settlement = run_round(hands, wagers, jackpot=1_000_000, progressive=config)
    assert settlement.memory.progressive_jackpot == 1_000_000 + 2 * PROGRESSIVE_STAKE * 100 // 1000
    unchanged = run_round(hands, wagers, jackpot=1_000_000)
    assert unchanged.memory.progressive_jackpot == 1_000_000


def test_progressive_stake_is_fixed() -> None:
    """The progressive is one fixed stake at the table (ProgressiveConfig): another amount is
    refused."""
    with pytest.raises(WagerError):
        run({"1": "A♠ K♠ Q♠", "dealer": QUALIFYING_DEALER}, plays("1", progressive=100))


def test_fold_keeps_the_progressive_and_envy() -> None:
    """A fold loses the Ante and the Pair Plus (3.8.1 lists exactly those); the Progressive is
    paid on the hand dealt irrespective of the dealer (3.11) and a folded progressive player
    still receives the Envy Bonus (3.12: "all other seated Players who have wagered")."""
    results = run({"1": "8♦ 7♣ 6♥", "2": "A♠ K♠ Q♠", "dealer": QUALIFYING_DEALER},
                  [Wager("a", "1", "ante", 100), Wager("pp", "1", "pair_plus", 100),
                   Wager("prog", "1", "progressive", PROGRESSIVE_STAKE)]
                  + plays("2"))
    assert results["a"].net == -100
    assert results["pp"].net == -100
    assert results["prog"].net == STRAIGHT_PROGRESSIVE - PROGRESSIVE_STAKE + ENVY_AKQ_SPADES


def test_fold_loses_only_the_folding_players_wagers() -> None:
    """3.8.1: "the Player loses his wager": ann folds (Ante without Play), bob's own Pair Plus
    on the same box is paid on the hand (4.2), not lost with her fold."""
    results = run({"1": "10♠ 10♥ K♦", "dealer": QUALIFYING_DEALER},
                  [Wager("a", "1", "ante", 100, player="ann"),
                   Wager("pp-ann", "1", "pair_plus", 50, player="ann"),
                   Wager("pp-bob", "1", "pair_plus", 50, player="bob")])
    assert results["a"].net == -100
    assert results["pp-ann"].net == -50
    assert (results["pp-bob"].outcome, results["pp-bob"].net) == (Outcome.WIN, 50)


# --- envy bonus (3.12, 3.13) ----------------------------------------------------------------


@pytest.mark.parametrize(("top", "envy"), [("A♠ K♠ Q♠", ENVY_AKQ_SPADES),
                                           ("A♥ K♥ Q♥", ENVY_AKQ_SUITED)],
                         ids=["akq-spades", "akq-suited"])
def test_envy_bonus_to_other_seated_progressive_players(top: str, envy: int) -> None:
    """Another player's AKQ suited pays every other seated progressive player the Envy Bonus
    of 4.4 (3.12), here on top of a losing progressive hand; the winner gets no Envy Bonus
    for his own hand."""
    results = run({"1": top, "2": "6♠ 4♥ 2♦", "dealer": QUALIFYING_DEALER},
                  plays("1", progressive=PROGRESSIVE_STAKE)
                  + plays("2", progressive=PROGRESSIVE_STAKE), jackpot=1_000_000)
    assert results["progressive2"].net == -PROGRESSIVE_STAKE + envy
    own = 1_000_000 if top == "A♠ K♠ Q♠" else AKQ_SUITED
    assert results["progressive1"].net == own - PROGRESSIVE_STAKE


def test_envy_bonus_triggered_by_ante_without_progressive() -> None:
    """An Ante player without a Progressive wager still triggers the Envy Bonus (3.12: "with
    or without a Progressive wager")."""
    results = run({"1": "A♠ K♠ Q♠", "2": "6♠ 4♥ 2♦", "dealer": QUALIFYING_DEALER},
                  plays("1") + plays("2", progressive=PROGRESSIVE_STAKE))
    assert results["progressive2"].net == -PROGRESSIVE_STAKE + ENVY_AKQ_SPADES


def test_envy_bonus_adds_to_own_win_and_per_trigger() -> None:
    """A straight's $15 and two Envy Bonuses (one per top-two hand at other boxes) add up
    (3.11, 3.12, 4.4)."""
    hands = {"1": "A♠ K♠ Q♠", "2": "8♦ 7♣ 6♥", "3": "A♥ K♥ Q♥", "dealer": "J♣ 10♣ 9♣"}
    results = run(hands, plays("1") + plays("2", progressive=PROGRESSIVE_STAKE) + plays("3"))
    assert results["progressive2"].net == \
        STRAIGHT - PROGRESSIVE_STAKE + ENVY_AKQ_SPADES + ENVY_AKQ_SUITED


def test_no_envy_from_a_pair_plus_only_hand() -> None:
    """A top-two hand at a box with only Pair Plus gives no one an Envy Bonus (3.13)."""
    results = run({"1": "A♠ K♠ Q♠", "2": "6♠ 4♥ 2♦", "dealer": QUALIFYING_DEALER},
                  [Wager("pp1", "1", "pair_plus", 10)]
                  + plays("2", progressive=PROGRESSIVE_STAKE))
    assert results["progressive2"].net == -PROGRESSIVE_STAKE
    assert results["pp1"].net == 40 * 10


@pytest.mark.parametrize("order", [1, -1], ids=["listed", "reversed"])
def test_envy_bonus_once_per_player_not_per_box(order: int) -> None:
    """3.12 pays "all other seated Players": bob with progressive wagers at two boxes receives
    one Envy Bonus for ann's AKQ spades, on his first box in layout order, whatever the list
    order; his other progressive wager is settled on its hand alone."""
    wagers = plays("1") + [
        Wager(f"{bet}{pos}", pos, bet, PROGRESSIVE_STAKE if bet == "progressive" else 100,
              player="bob")
        for pos in ("2", "3") for bet in ("ante", "play", "progressive")]
    hands = {"1": "A♠ K♠ Q♠", "2": "6♠ 4♥ 2♦", "3": "9♣ 5♥ 3♠", "dealer": QUALIFYING_DEALER}
    results = run(hands, wagers[::order], jackpot=1_000_000)
    assert results["progressive2"].net == -PROGRESSIVE_STAKE + ENVY_AKQ_SPADES
    assert results["progressive3"].net == -PROGRESSIVE_STAKE


def test_no_envy_for_a_standing_player() -> None:
    """Only seated players receive the Envy Bonus (3.12)."""
    wagers = plays("1") + [Wager("a2", "2", "ante", 100), Wager("p2", "2", "play", 100),
                           Wager("prog2", "2", "progressive", PROGRESSIVE_STAKE, player="bob",
                                 seated=False)]
    results = run({"1": "A♠ K♠ Q♠", "2": "6♠ 4♥ 2♦", "dealer": QUALIFYING_DEALER}, wagers)
    assert results["prog2"].net == -PROGRESSIVE_STAKE


def test_no_envy_from_ones_own_other_box() -> None:
    """The Envy Bonus goes to "other" players: the AKQ spades player's progressive at another
    box earns none from his own hand (3.12)."""
    wagers = [Wager("a1", "1", "ante", 100, player="ann"), Wager("p1", "1", "play", 100,
                                                                player="ann"),
              Wager("a2", "2", "ante", 100, player="ann"), Wager("p2", "2", "play", 100,
                                                                player="ann"),
              Wager("prog2", "2", "progressive", PROGRESSIVE_STAKE, player="ann")]
    results = run({"1": "A♠ K♠ Q♠", "2": "6♠ 4♥ 2♦", "dealer": QUALIFYING_DEALER}, wagers)
    assert results["prog2"].net == -PROGRESSIVE_STAKE


def test_positions_are_one_to_seven() -> None:
    """Boxes "1".."7" against the dealer (RWS-3CP 2.1.1; issue 2 settle contract)."""
    rules = get_game(GAME)
    assert tuple(rules.positions) == tuple(str(n) for n in range(1, 8))
    with pytest.raises(WagerError):
        run({"1": "A♠ K♠ Q♠", "dealer": QUALIFYING_DEALER}, [Wager("x", "8", "ante", 100)])


# --- hypothesis: ante and play against the dealer ---------------------------------------

SIX_CARDS = st.lists(st.sampled_from(FULL_DECK), min_size=6, max_size=6, unique=True)


def qualifies(dealer: Sequence[Card]) -> bool:
    """Queen-high or better (RWS-3CP 3.9), written independently: any pair, flush or straight
    qualifies, else the top card must be a Queen, King or Ace."""
    ranks = sorted(int(card.rank) for card in dealer)  # ace = 14
    pair = len(set(ranks)) < 3
    flush = len({card.suit for card in dealer}) == 1
    straight = not pair and (ranks[2] - ranks[0] == 2 or ranks == [2, 3, 14])
    return pair or flush or straight or ranks[2] >= 12


@given(six=SIX_CARDS)
def test_play_is_paid_only_against_a_qualifying_dealer(six: list[Card]) -> None:
    """Play: no payment when the dealer does not qualify (3.9.1); otherwise won, lost or
    stood off by ranking (3.10.1-3.10.3). The Ante is always paid against a non-qualifying
    dealer (3.9.2)."""
    player, dealer = tuple(six[:3]), tuple(six[3:])
    rules = get_game(GAME)
    round_ = RoundInput(rules=rules, hands={"1": player, "dealer": dealer},
                        wagers=tuple(plays("1")))
    results = settle(round_).by_id()
    if not qualifies(dealer):
        assert (results["play1"].outcome, results["play1"].net) == (Outcome.PUSH, 0)
        assert results["ante1"].outcome is Outcome.WIN
        assert results["ante1"].net >= 100
        return
    p = hand_values.strength(hand_values.evaluate(rules, player))
    d = hand_values.strength(hand_values.evaluate(rules, dealer))
    expected = 100 if p > d else -100 if p < d else 0
    assert results["play1"].net == expected


# --- order independence (issue 16) ----------------------------------------------------------


@given(st.lists(st.tuples(st.sampled_from(["1", "2", "3"]), st.sampled_from(["ann", "bob", None]),
                          st.booleans(), st.sampled_from([None, True, False])),
                min_size=1, max_size=5),
       st.sets(st.sampled_from(["1", "2", "3"])), st.data())
@settings(max_examples=150, deadline=None)
def test_results_do_not_depend_on_the_order_wagers_are_listed(
        raw: list[tuple[str, str | None, bool, bool | None]], playing: set[str],
        data: st.DataObject) -> None:
    """Folds (3.8.1, per player) and Envy Bonuses (3.12, once per player) settle the same
    whatever order the wagers are listed in. Each box plays or folds as a whole, as the table's
    decision is per box (3.8.2: the Play equals the Ante)."""
    wagers: list[Wager] = []
    for i, (pos, player, progressive, seated) in enumerate(raw):
        wagers.append(Wager(f"a{i}", pos, "ante", 100, player=player, seated=seated))
        if pos in playing:
            wagers.append(Wager(f"p{i}", pos, "play", 100, player=player, seated=seated))
        wagers.append(Wager(f"pp{i}", pos, "pair_plus", 50, player=player, seated=seated))
        if progressive:
            wagers.append(Wager(f"g{i}", pos, "progressive", PROGRESSIVE_STAKE, player=player,
                                seated=seated))
    shuffled = data.draw(st.permutations(wagers))
    hands = {"1": "A♠ K♠ Q♠", "2": "A♥ K♥ Q♥", "3": "6♠ 4♥ 2♦", "dealer": QUALIFYING_DEALER}
    assert run(hands, wagers, jackpot=1_000_000) == run(hands, shuffled, jackpot=1_000_000)
