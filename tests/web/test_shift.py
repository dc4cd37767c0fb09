"""Issue 22, done when: a shift with three irregularities is run end to end from the dealer's
screen and the supervisor's login there, with no shell. The CI-sized shift of
``benchmarks/shift.py`` (which runs 50 rounds): four RWS-3CP rounds by taps in a touch-emulating
Chromium at 800x480, against a simulated shuffler (its own process, on a real pty),
``tablectl run`` and ``tablectl web`` as processes. The shuffler itself exposes a card, jams and
counts 51 cards; a supervisor logs in at the screen with the PIN each time and answers with the
buttons the table offers. Then the journal is checked against the screen."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.journal.reader import iter_records
from testbed.shift.audit import audit, audit_records
from testbed.shift.play import plan_shift, run_shift
from testbed.shift.table import Irregularity, ShiftError, ShiftTable, shift_table

IRREGULAR = {1: Irregularity.EXPOSED_CARD, 2: Irregularity.JAM, 3: Irregularity.WRONG_COUNT}


@pytest.fixture(name="table")
def table_fixture() -> Iterator[ShiftTable]:
    workdir = Path(tempfile.mkdtemp(prefix="ts", dir="/tmp"))  # a socket path is short
    try:
        with shift_table(workdir) as table:
            yield table
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def test_a_shift_with_three_irregularities_from_the_screen_alone(browser: object,
                                                                 table: ShiftTable) -> None:
    """Four rounds (Antes on three boxes, Pair Plus, a standing player, folds, RWS-3CP 3.8);
    the second meets an exposed card and the third a jam (both hold the round for a supervisor:
    the house decides, RWS-3CP has no clause), the fourth a deck counted 51 (void, RWS-3CP
    5.1.3). Each is answered on the screen by super1 after the PIN. The journal then shows
    every wager settled or returned exactly once, each supervisor action under super1 and none
    under the dealer, no command from anyone but the two of them, and the screen's money is the
    journal's, wager by wager."""
    run, screen = run_shift(browser, table, plan_shift(4, IRREGULAR))
    checked = audit(table.journal, run.shown, screen.supervisor_taps)
    assert run.rounds == 4 and run.irregularities_answered == 3
    assert screen.supervisor_logins == 3
    assert screen.supervisor_taps == ["supervisor.continue", "supervisor.clear-fault",
                                      "supervisor.continue", "supervisor.clear-fault"]
    assert checked.holds == ("exposed_card", "jammed")
    assert checked.void_clauses == ("RWS-3CP 5.1.3",)
    assert (checked.rounds_settled, checked.rounds_voided) == (3, 1)
    assert checked.supervisor_actions == 4 and checked.dealer_commands > 4 * 4
    assert checked.results == checked.wagers >= 4 * 3
    assert checked.screen_net == checked.journal_net
    # the audit is not a rubber stamp: the same journal with one supervisor action under the
    # dealer's name, or a result the screen never showed, is refused
    records = list(iter_records([table.journal]))
    index = next(i for i, r in enumerate(records) if r.event_type == "input_command"
                 and r.payload["fields"].get("role") == "supervisor")
    forged = dataclasses.replace(records[index], actor=str(records[index].actor).replace(
        "supervisor:super1 [supervisor", "supervisor:dealer1 [supervisor"))
    with pytest.raises(ShiftError, match="journaled as 'supervisor:dealer1"):
        audit_records([*records[:index], forged, *records[index + 1:]], run.shown,
                      screen.supervisor_taps)
    with pytest.raises(ShiftError, match="never shown on the screen"):
        audit_records(records, run.shown[1:], screen.supervisor_taps)
