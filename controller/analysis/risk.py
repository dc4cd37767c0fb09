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


def _money(per_hundred: int) -> str:
    sign = "-" if per_hundred < 0 else "+"
    return f"{sign}{abs(per_hundred) // 100}.{abs(per_hundred) % 100:02d}"


def lines(report: RiskReport) -> list[str]:
    """Plain text: one line per bet (the CLI)."""
    machine = report.machine
    out = [f"risk: {report.game.value} on a {machine.name} machine fed {machine.feed.value}, "
           f"{report.boxes} boxes, {report.deals} deals (seed {report.seed}); player's return "
           f"per 100.00 staked (minor units as money), +- one standard error:"]
    for bet in report.bets:
        guessed = (f"guessing {_money(bet.guessed.per_hundred)} +- "
                   f"{_money(bet.guessed.se_per_hundred)[1:]} on {bet.taken} of {bet.offered} "
                   "chances" if bet.taken else "guessing: never bets")
        out.append(f"  {bet.bet}: fair {_money(round(bet.fair * 10_000))}; machine blind "
                   f"{_money(bet.blind.per_hundred)} +- {_money(bet.blind.se_per_hundred)[1:]}; "
                   f"{guessed}")
    return out


def markdown(reports: Sequence[RiskReport]) -> list[str]:
    """The report.md section."""
    out = ["## Risk in money", ""]
    if not reports:
        return out + ["No monitor flagged a biased shuffle order: no risk to put in money.", ""]
    for report in reports:
        machine = report.machine
        out += [f"{report.game.value} on a {machine.name} machine fed {machine.feed.value}, "
                f"{report.boxes} boxes, {report.deals} deals (seed {report.seed}). The player's "
                "return in % of stake and per 100.00 staked (rounded to the minor unit, halves "
                "to even), with one standard error; positive is the player's edge.", "",
                "| bet | fair (enumerated) | machine, blind | machine, guessing | bets taken |",
                "|---|---:|---:|---:|---:|"]
        for bet in report.bets:
            guessed = (f"{bet.guessed.percent:+.2f}% ({_money(bet.guessed.per_hundred)} "
                       f"+- {_money(bet.guessed.se_per_hundred)[1:]})" if bet.taken else "-")
            out.append(f"| {bet.bet} | {float(bet.fair * 100):+.2f}% "
                       f"({_money(round(bet.fair * 10_000))}) | {bet.blind.percent:+.2f}% "
                       f"({_money(bet.blind.per_hundred)} +- "
                       f"{_money(bet.blind.se_per_hundred)[1:]}) | {guessed} | "
                       f"{bet.taken} of {bet.offered} |")
        out.append("")
    return out


def as_json(reports: Sequence[RiskReport]) -> list[dict[str, Any]]:
    return [report.as_json() for report in reports]
