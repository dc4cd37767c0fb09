"""The reference game server's own LIVE-3P arithmetic, written from the rule text and not from
the table's settlement engine, so that checking a settlement against it checks the table.

LIVE-3P Game Play: a hand's points are its cards' face values mod 10 (pictures count 0); the
ranking list is 3 Knights (three pictures) first, then by points, and at equal points by the
number of pictures (Double Knights Nine above Single Knights Nine above Plain Nine). Win and
Lose pay 1 to 1, 50% when the winning hand is a six (ranking list #11-#13), push on a TIE; the
TIE side bet pays 8 to 1 when the hands rank the same; 3 Knights pays 16 to 1."""

from __future__ import annotations

from collections.abc import Sequence

_POINTS = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}
PICTURES = frozenset("JQK")
BETS = ("win", "lose", "tie", "three_knights")
"""The bets the reference client places (each on p1, p2 or p3)."""


def _rank_of(code: str) -> str:
    return code[:-1] if code[:-1] != "10" else "T"


def rank(cards: Sequence[str]) -> int:
    """A number that orders hands as the LIVE-3P ranking list does (larger ranks higher)."""
    ranks = [_rank_of(card) for card in cards]
    pictures = sum(1 for r in ranks if r in PICTURES)
    if pictures == 3:
        return 100
    points = sum(_POINTS.get(r, 0) if not r.isdigit() else int(r) for r in ranks) % 10
    return points * 3 + pictures


def is_six(cards: Sequence[str]) -> bool:
    """Ranking list #11-#13: a six, with two, one or no pictures."""
    return rank(cards) != 100 and rank(cards) // 3 == 6


def net(bet: str, amount: int, player: Sequence[str], banker: Sequence[str]) -> int:
    """What one wager wins (positive) or loses (negative), in minor units (rounding down)."""
    mine, theirs = rank(player), rank(banker)
    if bet == "tie":
        return amount * 8 if mine == theirs else -amount
    if bet == "three_knights":
        return amount * 16 if mine == 100 else -amount
    if mine == theirs:
        return 0
    winner_is_player = mine > theirs
    wins = winner_is_player if bet == "win" else not winner_is_player
    if not wins:
        return -amount
    return amount // 2 if is_six(player if winner_is_player else banker) else amount
