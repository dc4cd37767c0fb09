"""``python benchmarks/shift.py [--rounds 50]``: a shift at the table with no shell (issue 22).

"Done when a shift of 50 rounds with three irregularities can be run end to end from the
dealer's screen and the supervisor's login there, with no shell." This runs it: the table as
processes (:mod:`benchmarks.shift_table`: a simulated shuffler on a real pty, ``tablectl run``,
``tablectl web``), the dealer's screen in Debian's Chromium at 800x480 by taps only
(:mod:`benchmarks.shift_screen`), Three Card Poker (RWS-3CP) rounds with Antes on three boxes,
Pair Plus now and then, a standing player every other round and folds; three irregularities
made by the shuffler itself (an exposed card, a jam, a deck that counts 51), each answered on
the screen by a supervisor who logs in there with the PIN. Then the journal is checked against
the screen (:mod:`benchmarks.shift_audit`). Prints its figures: rounds, taps, seconds per round,
irregularities answered. Exit 1 (one line per problem) when the journal and the screen
disagree. ``tests/web/test_shift.py`` runs a 4-round shift of the same code in CI.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from playwright.sync_api import expect  # noqa: E402

from benchmarks.shift_audit import Audit, audit  # noqa: E402
from benchmarks.shift_screen import (  # noqa: E402
    WAIT_MS, DealerScreen, ShownResult, chromium, dealer_screen,
)
from benchmarks.shift_table import Irregularity, ShiftError, ShiftTable, shift_table  # noqa: E402

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


def figures(run: ShiftRun, screen: DealerScreen, checked: Audit) -> dict[str, object]:
    return {"rounds": run.rounds, "rounds settled": checked.rounds_settled,
            "rounds voided": checked.rounds_voided, "wagers": checked.wagers,
            "taps": screen.taps, "taps per round": round(screen.taps / max(run.rounds, 1), 1),
            "seconds": round(run.seconds, 1),
            "seconds per round": round(run.seconds / max(run.rounds, 1), 2),
            "irregularities answered": run.irregularities_answered,
            "supervisor logins (PIN)": screen.supervisor_logins,
            "supervisor actions journaled": checked.supervisor_actions,
            "dealer commands journaled": checked.dealer_commands,
            "holds": ", ".join(checked.holds), "void clauses": ", ".join(checked.void_clauses),
            "net on screen = journal": f"{checked.screen_net} = {checked.journal_net}"}


def default_irregularities(rounds: int) -> dict[int, Irregularity]:
    """An exposed card, a jam and a wrong count, spread over the shift."""
    kinds = (Irregularity.EXPOSED_CARD, Irregularity.JAM, Irregularity.WRONG_COUNT)
    return {max(1, rounds * (k + 1) // 4): kind for k, kind in enumerate(kinds)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args(argv)
    if args.rounds < 4:
        parser.error("--rounds: at least 4 (three of them meet an irregularity)")
    plans = plan_shift(args.rounds, default_irregularities(args.rounds))
    workdir = Path(tempfile.mkdtemp(prefix="shift", dir="/tmp"))
    try:
        with shift_table(workdir) as table, chromium() as browser:
            run, screen = run_shift(browser, table, plans)
            checked = audit(table.journal, run.shown, screen.supervisor_taps)
        for name, value in figures(run, screen, checked).items():
            print(f"{name}: {value}")
    except ShiftError as error:
        print(f"shift: {error}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
