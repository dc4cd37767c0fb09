"""A shift played from the dealer's screen alone (issue 22): the rounds planned (wagers by
chips on boxes, Pair Plus now and then, a standing player, folds, the irregularities the
shuffler makes) and played by taps on :mod:`testbed.shift.screen` at the table of
:mod:`testbed.shift.table`. ``benchmarks/shift.py`` runs 50 rounds and prints the figures;
``tests/web/test_shift.py`` runs 4 in CI."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from playwright.sync_api import expect

from testbed.shift.screen import WAIT_MS, DealerScreen, ShownResult, dealer_screen
from testbed.shift.table import Irregularity, ShiftTable


BOXES = 7


@dataclass(frozen=True, slots=True)
class PlannedWager:
    box: str
    chips: tuple[int, ...]
    bet: str = "ante"
    player: str | None = None
    """``Standing 1`` for a standing player (RWS-NC3P 1.15's words, the screen's button)."""


@dataclass(frozen=True, slots=True)
class RoundPlan:
    wagers: tuple[PlannedWager, ...]
    folds: frozenset[str]
    irregularity: Irregularity | None = None

    @property
    def boxes(self) -> list[str]:
        return list(dict.fromkeys(w.box for w in self.wagers))


def plan_shift(rounds: int, irregular: Mapping[int, Irregularity]) -> list[RoundPlan]:
    """Round ``n``: Antes on three boxes that move round the table, a Pair Plus every third
    round, a standing player's Ante every other round (placed last: the screen keeps the
    player chosen), and one or two boxes folding (RWS-3CP 3.8)."""
    plans = []
    for n in range(rounds):
        first, second, third = (str((n + k) % BOXES + 1) for k in (0, 3, 5))
        wagers = [PlannedWager(first, (500,)), PlannedWager(second, (2500,)),
                  PlannedWager(third, (500, 100))]
        if n % 3 == 0:
            wagers.append(PlannedWager(second, (500,), bet="pair_plus"))
        if n % 2 == 0:
            wagers.append(PlannedWager(first, (500,), player="Standing 1"))
        folds = {second} if n % 2 else set()
        if n % 5 == 0:
            folds.add(third)
        plans.append(RoundPlan(tuple(wagers), frozenset(folds), irregular.get(n)))
    return plans


@dataclass
class ShiftRun:
    """What happened on the screen."""

    rounds: int = 0
    seconds: float = 0.0
    irregularities_answered: int = 0
    shown: list[ShownResult] = field(default_factory=list)


def play_round(screen: DealerScreen, table: ShiftTable, plan: RoundPlan) -> list[ShownResult]:
    """One round by taps; an irregularity is answered by the supervisor at the screen."""
    page = screen.page
    if plan.irregularity is not None:
        table.arm(plan.irregularity)
    round_id = screen.open_round()
    for wager in plan.wagers:
        screen.place(wager.box, list(wager.chips), bet=wager.bet, player=wager.player)
    screen.done_betting()
    screen.step("round.close")
    if plan.irregularity is Irregularity.WRONG_COUNT:
        screen.wait_state("Round void")  # RWS-3CP 5.1.3: every wager returned
        shown = screen.results(round_id, len(plan.wagers))
        screen.supervisor_answers("supervisor.clear-fault")
        expect(page.locator('#actions button[data-verb="supervisor.clear-fault"]')
               ).to_have_count(0, timeout=WAIT_MS)
        screen.supervisor_leaves()
        screen.step("deck.counted")  # the dealer counts the deck: 52
        expect(page.locator('#actions button[data-verb="round.open"]')).to_be_visible(
            timeout=WAIT_MS)
        return shown
    if plan.irregularity is not None:
        hold = page.locator("#hold")
        expect(hold).to_be_visible(timeout=WAIT_MS)
        if plan.irregularity is Irregularity.JAM:
            screen.supervisor_answers("supervisor.clear-fault")
            expect(hold.locator('button[data-verb="supervisor.clear-fault"]')).to_have_count(
                0, timeout=WAIT_MS)
        screen.supervisor_answers("supervisor.continue")
        expect(hold).to_be_hidden(timeout=WAIT_MS)
        screen.supervisor_leaves()
    expect(page.locator("#next")).to_contain_text("play or fold", timeout=WAIT_MS)
    for box in plan.boxes:
        screen.decide(box, "fold" if box in plan.folds else "play")
    screen.step("round.reveal")
    screen.step("round.settle")
    screen.wait_state("Settled")
    return screen.results(round_id, len(plan.wagers))


def run_shift(browser: object, table: ShiftTable, plans: Sequence[RoundPlan]) -> tuple[
        ShiftRun, DealerScreen]:
    run = ShiftRun()
    with dealer_screen(browser) as screen:
        screen.log_in(table.url)
        began = time.perf_counter()
        for plan in plans:
            run.shown.extend(play_round(screen, table, plan))
            run.rounds += 1
            run.irregularities_answered += plan.irregularity is not None
        run.seconds = time.perf_counter() - began
    return run, screen
