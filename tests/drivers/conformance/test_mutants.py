"""The kit judged by devices built to test it (:mod:`testbed.conformance.devices`,
:mod:`testbed.conformance.mutants`): every conformant variant passes every row run
against it, a few runs each (the 20-run figures are ``benchmarks/conformance.py``'s), and
every mutant, broken in one clause of
docs/protocols.md, fails the row that checks that clause, naming the clause, what was
expected and what arrived."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from drivers.conformance import Verdict
from firmware_sim.shuffler import ShufflerSim
from testbed.conformance.bench import run_kit, scenarios_for
from testbed.conformance.devices import CONFORMANT, Variant, _mix
from testbed.conformance.mutants import MUTANTS, ResyncWithoutBacklog

CONFORMANT_RUNS = 3


@pytest.mark.parametrize("run", range(CONFORMANT_RUNS))
@pytest.mark.parametrize("variant", CONFORMANT, ids=[v.name for v in CONFORMANT])
def test_conformant_variant_passes(variant: Variant, run: int, tmp_path: Path) -> None:
    """A device the document allows (resend every 0.5 s against the SHOULD 0.3 s, replies
    0.9 s late within the 1 s budget, a slow mechanism, an exposed card by mask alone)
    passes every row run against it."""
    results = run_kit(variant.make(), "pty", tmp_path, scenarios_for(variant.device,
                                                                      variant.rows))
    failed = {k: r.detail for k, r in results.items() if r.verdict is not Verdict.PASS}
    assert failed == {}


@pytest.mark.parametrize("variant", MUTANTS, ids=[v.name for v in MUTANTS])
def test_mutant_fails_with_its_clause(variant: Variant, tmp_path: Path) -> None:
    """A device broken in one clause fails the row that checks it, the failure starting
    with that clause and saying what arrived."""
    results = run_kit(variant.make(), "pty", tmp_path, scenarios_for(variant.device,
                                                                      variant.rows))
    row = results[str(variant.fails)]
    assert row.verdict is Verdict.FAIL, row.detail
    assert row.detail.startswith(f"protocols.md {variant.clause}:"), row.detail
    for words in variant.detail:
        assert words in row.detail, row.detail
    if variant.name.endswith("heartbeat-1.9s"):  # the measured period, never less than 1.9 s
        mean = re.search(r"HEARTBEAT every (\d+\.\d+) s on average", row.detail)
        assert mean is not None and float(mean.group(1)) >= 1.85, row.detail  # (a loaded
        # host delays its beats further: 2.10 s was seen with six processes on two cores)
    assert "Card(" not in row.detail and "b'" not in row.detail  # names and hex, not reprs


def test_the_mutants_cover_what_the_issue_names() -> None:
    """At least the kinds of breakage the issue reports: timing (heartbeat period, no
    resend), a lid or a draw not seen, phantom cards, wrong SEQ and bad CRC, the 5.4 fault,
    and the 5.2 decision."""
    names = {v.name for v in MUTANTS}
    assert {"heartbeat-1.9s", "shoe-heartbeat-1.9s", "no-resend", "shoe-silent-lid-close",
            "shoe-double-card", "shoe-phantom-card", "crc-nak-seq-0", "identity-bad-crc",
            "exposed-is-a-fault", "shuffle-with-hand-waiting", "repeated-card",
            "bad-mask"} <= names


def test_a_failed_row_does_not_fail_the_next(tmp_path: Path) -> None:
    """A device whose RESYNC leaves out its backlog fails event-resend (3.3) and is left
    holding that row's SHUFFLE_DONE unacknowledged; the rows after it start from a known
    state (RESYNC and drain) and wait only for new events, so shuffle and dispense pass
    (the kit of issue 26 failed shuffle with "5.6 state SHUFFLING", having taken the old
    event for the new one)."""
    sim = _mix(ResyncWithoutBacklog, ShufflerSim, name="NoBacklogShuffler")(seed=3)
    results = run_kit(sim, "pty", tmp_path,
                      scenarios_for("shuffler", ("event-resend", "shuffle", "dispense")))
    assert results["event-resend"].verdict is Verdict.FAIL
    assert results["event-resend"].detail.startswith("protocols.md 3.3:")
    assert results["shuffle"].verdict is Verdict.PASS, results["shuffle"].detail
    assert results["dispense"].verdict is Verdict.PASS, results["dispense"].detail
