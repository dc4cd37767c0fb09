"""Payout arithmetic: odds applied to a stake in integer minor units, rounded DOWN.

Rounding rule (docs/rounding.md): the only payouts that can produce a fraction are the 1 to 2
payouts (a win on six points) and pro-rata stakes (RWS-NC3P 5.1.1). Both are rounded down to a
multiple of the table's smallest unit, which the house configures (``rounding_unit``, in minor
units; 1 means exact to the cent). Rounding down never pays more than the pay table.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.games.rules import Odds
from controller.settlement.model import Component, Outcome


def round_down(amount: int, unit: int) -> int:
    """The largest multiple of ``unit`` not above ``amount`` (amount >= 0)."""
    return amount // unit * unit


def winnings(stake: int, odds: Odds, unit: int) -> int:
    """What ``odds`` pay on ``stake``, stake excluded.

    Whole odds ("8 to 1") pay exactly. Fractional odds ("1 to 2") are rounded down to ``unit``,
    the table's smallest payable amount (docs/money.md).
    """
    if odds.stake == 1:
        return stake * odds.win
    return round_down(stake * odds.win // odds.stake, unit)


def outcome_of(net: int) -> Outcome:
    """The outcome a combined result shows: by the sign of its net.

    A wager whose base result and bonus disagree (an Ante lost to the dealer but paid an Ante
    Bonus larger than the stake) is reported by what the player actually receives; the
    components keep the detail.
    """
    if net > 0:
        return Outcome.WIN
    if net < 0:
        return Outcome.LOSE
    return Outcome.PUSH


@dataclass(frozen=True, slots=True)
class Resolution:
    """A wager's result before it is tied to the wager's id."""

    outcome: Outcome
    net: int
    rule: str
    components: tuple[Component, ...] = ()


def win(stake: int, odds: Odds, unit: int, rule: str, label: str = "win") -> Resolution:
    amount = winnings(stake, odds, unit)
    return Resolution(Outcome.WIN, amount, rule, (Component(label, amount, rule),))


def lose(stake: int, rule: str, label: str = "lose") -> Resolution:
    return Resolution(Outcome.LOSE, -stake, rule, (Component(label, -stake, rule),))


def push(rule: str, label: str = "push") -> Resolution:
    return Resolution(Outcome.PUSH, 0, rule, (Component(label, 0, rule),))


def returned(rule: str, label: str = "returned") -> Resolution:
    return Resolution(Outcome.RETURNED, 0, rule, (Component(label, 0, rule),))
