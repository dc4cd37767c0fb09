"""``python benchmarks/shift.py [--rounds 50]``: a shift at the table with no shell (issue 22).

"Done when a shift of 50 rounds with three irregularities can be run end to end from the
dealer's screen and the supervisor's login there, with no shell." This runs it: the table as
processes (:mod:`testbed.shift.table`: a simulated shuffler on a real pty, ``tablectl run``,
``tablectl web``), the dealer's screen in Debian's Chromium at 800x480 by taps only
(:mod:`testbed.shift.screen`), Three Card Poker (RWS-3CP) rounds with Antes on three boxes,
Pair Plus now and then, a standing player every other round and folds; three irregularities
made by the shuffler itself (an exposed card, a jam, a deck that counts 51), each answered on
the screen by a supervisor who logs in there with the PIN. Then the journal is checked against
the screen (:mod:`testbed.shift.audit`). Prints its figures: rounds, taps, seconds per round,
irregularities answered. Exit 1 (one line per problem) when the journal and the screen
disagree. The rounds are played by :mod:`testbed.shift.play`; ``tests/web/test_shift.py``
runs a 4-round shift of the same code in CI.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from testbed.shift.audit import Audit, audit  # noqa: E402
from testbed.shift.play import ShiftRun, plan_shift, run_shift  # noqa: E402
from testbed.shift.screen import DealerScreen, chromium  # noqa: E402
from testbed.shift.table import Irregularity, ShiftError, shift_table  # noqa: E402


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
