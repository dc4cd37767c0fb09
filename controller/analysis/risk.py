"""The integrity report's risk section (issue 25): when a monitor flagged a biased shuffle, what
the machine the monitors test for puts at risk, per bet of the table's game, in money.

Offline only (``tablectl integrity report``): the Monte Carlo of :mod:`controller.protection.risk`
takes seconds, so it never runs on the table thread. The machine is the one-pass shelf
shuffler the order monitors test for; its shelf count is the one the likelihood test named
(``one_pass_lr``: "... under a one-pass 20-shelf shuffle ..."), else 10, the machine the valleys
and sortedness monitors are set to decide on within a few decks (docs/game-protection.md).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from controller.analysis.odds import game_odds
from controller.games.catalog import get_game
from controller.protection.feed import Feed
from controller.protection.limits import ONE_PASS_SHELVES
from controller.protection.monitors import MonitorId
from controller.protection.risk import Machine, RiskReport, estimate

BIASED_ORDER = frozenset({MonitorId.SORTEDNESS.value, MonitorId.ONE_PASS.value,
                          MonitorId.ONE_PASS_LR.value})
"""The monitors whose finding is a one-pass-like bias of the shuffle's order: the machine the
risk is computed for. A repeated order or a stuck position is another fault, with another risk."""
_NAMED_SHELVES = re.compile(r"one-pass (\d+)-shelf")
DEFAULT_SHELVES = min(ONE_PASS_SHELVES)
REPORT_DEALS = 1000
REPORT_INNER = 30


def flagged_shelves(flags: Iterable[tuple[str, str]]) -> int | None:
    """The shelf count of the machine the ``(monitor, detail)`` flags point to, or ``None``
    when no monitor flagged a biased order. The likelihood test names the count it found
    likelier; the fewest named (the stronger bias) is taken."""
    named: list[int] = []
    biased = False
    for monitor, detail in flags:
        if monitor not in BIASED_ORDER:
            continue
        biased = True
        named += [int(n) for n in _NAMED_SHELVES.findall(detail)]
    if not biased:
        return None
    return min(named) if named else DEFAULT_SHELVES


def risk_reports(games: Mapping[str, int], shelves: int, feed: Feed, *, seed: int = 0,
                 deals: int = REPORT_DEALS, inner: int = REPORT_INNER) -> list[RiskReport]:
    """One estimate per game the journal's tables played (``games``: game id -> boxes)."""
    out = []
    for game_id, boxes in sorted(games.items()):
        rules = get_game(game_id)
        fair = {bet: -odds.house_edge for bet, odds in game_odds(rules).items()}
        out.append(estimate(rules, Machine(shelves, feed), random.Random(seed), deals=deals,
                            boxes=boxes or None, inner=inner, fair=fair, seed=seed))
    return out


def _figure(percent: float, per_hundred: int, se: int | None = None) -> str:
    """``-0.575% = -58 +- 331``: the return in % of stake, then in minor units per 100.00
    staked (an integer: the exact ratio rounded, halves to even) with its standard error."""
    spread = "" if se is None else f" +- {se}"
    return f"{percent:+.3f}% = {per_hundred:+d}{spread}"


def _header(report: RiskReport) -> str:
    machine = report.machine
    return (f"{report.game.value} on a {machine.name} machine fed {machine.feed.value}, "
            f"{report.boxes} boxes, {report.deals} deals (seed {report.seed}); the player's "
            "return in % of stake = minor units per 100.00 staked +- one standard error "
            "(positive: the player's edge)")


def _cells(report: RiskReport) -> list[tuple[str, str, str, str | None, str]]:
    """Per bet: name, fair, blind, guessing (``None``: never bets), chances taken."""
    out = []
    for bet in report.bets:
        blind, guessed = bet.blind, bet.guessed
        out.append((
            bet.bet, _figure(float(bet.fair * 100), round(bet.fair * 10_000)),
            _figure(blind.percent, blind.per_hundred, blind.se_per_hundred),
            _figure(guessed.percent, guessed.per_hundred, guessed.se_per_hundred)
            if bet.taken else None,
            f"{bet.taken} of {bet.offered}"))
    return out


def lines(report: RiskReport) -> list[str]:
    """Plain text: one line per bet (the CLI)."""
    out = [f"risk: {_header(report)}:"]
    for bet, fair, blind, guessed, taken in _cells(report):
        guess = f"guessing {guessed} on {taken} chances" if guessed else "guessing: never bets"
        out.append(f"  {bet}: fair {fair}; blind {blind}; {guess}")
    return out


def markdown(reports: Sequence[RiskReport]) -> list[str]:
    """The report.md section."""
    out = ["## Risk in money", ""]
    for report in reports:
        out += [f"{_header(report)}.", "",
                "| bet | fair (enumerated) | machine, blind | machine, guessing | bets taken |",
                "|---|---:|---:|---:|---:|"]
        out += [f"| {bet} | {fair} | {blind} | {guessed or 'never bets'} | {taken} |"
                for bet, fair, blind, guessed, taken in _cells(report)]
        out.append("")
    return out


def as_json(reports: Sequence[RiskReport]) -> list[dict[str, Any]]:
    return [report.as_json() for report in reports]
