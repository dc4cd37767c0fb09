"""The clock gate: no round opens while the [clock] policy says the host clock cannot be trusted,
unless a supervisor overrides (journaled); a round in progress is never stopped by the clock;
steps and status changes become clock_stepped / clock_status events."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from controller.table import commands as cmd
from controller.table import events as ev
from drivers.events import ClockReport
from tests.controller.table.conftest import DEALER, SUPERVISOR, Harness, standard_hands

GAME = "rws-nc-three-pictures"


def report(*, trusted: bool, blocks: bool | None = None, step_ns: int = 0) -> ClockReport:
    return ClockReport("clock", synchronised=trusted, max_error_us=5_000 if trusted else None,
                       source="chrony", boot_id="b", wall_ns=1, mono_ns=2, step_ns=step_ns,
                       trusted=trusted, blocks_rounds=(not trusted) if blocks is None else blocks,
                       reason="" if trusted else "clock not synchronised")


def refusal(events: list[ev.RoundEvent]) -> str:
    refused = [e for e in events if isinstance(e, ev.CommandRefused)]
    assert refused, [type(e).__name__ for e in events]
    return refused[-1].reason


def test_untrusted_clock_refuses_a_new_round_and_says_how_out(make: Callable[..., Harness]
                                                              ) -> None:
    table = make(GAME)
    status = table.send(report(trusted=False))
    assert isinstance(status[-1], ev.ClockStatus) and status[-1].blocks_rounds
    reason = refusal(table.send(cmd.OpenRound(**DEALER)))
    assert "clock not synchronised" in reason
    assert "supervisor clock-override" in reason
    assert table.state == "idle"


def test_supervisor_override_lets_rounds_open_until_the_clock_is_trusted(
        make: Callable[..., Harness]) -> None:
    table = make(GAME)
    table.send(report(trusted=False))
    overridden = table.send(cmd.OverrideClock(**SUPERVISOR, reason="NTP server down, pit ok"))
    assert isinstance(overridden[-1], ev.ClockOverridden)
    assert overridden[-1].by == "sam (supervisor)" and overridden[-1].untrusted
    table.open()
    assert table.state == "betting"
    # the clock recovers: the override lapses, so a later loss blocks again
    table.send(report(trusted=True))
    assert table.machine.clock_override is None
    table.send(report(trusted=False))
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction.VOID,
                                      reason="test"))
    assert "clock not synchronised" in refusal(table.send(cmd.OpenRound(**DEALER)))


def test_a_dealer_may_not_override_and_nothing_to_override_is_refused(
        make: Callable[..., Harness]) -> None:
    table = make(GAME)
    assert "nothing to override" in refusal(
        table.send(cmd.OverrideClock(**SUPERVISOR, reason="x")))
    table.send(report(trusted=False))
    assert "Pit Supervisor" in refusal(table.send(cmd.OverrideClock(**DEALER, reason="x")))
    assert table.machine.clock_blocks_rounds()


def test_allow_policy_records_but_does_not_block(make: Callable[..., Harness]) -> None:
    table = make(GAME)
    status = table.send(report(trusted=False, blocks=False))
    assert not status[-1].trusted and not status[-1].blocks_rounds
    table.open()
    assert table.state == "betting"


@pytest.mark.parametrize("step_ns", [90 * 10**9, -3 * 10**9])
def test_a_step_mid_round_is_recorded_and_the_round_goes_on(make: Callable[..., Harness],
                                                            step_ns: int) -> None:
    """A clock that steps, or loses synchronisation, during a round is journaled; the round is
    dealt and settled as usual (the gate is only at "Place your bets")."""
    table = make(GAME)
    table.ready()
    events = table.send(report(trusted=False, step_ns=step_ns))
    assert [type(e) for e in events] == [ev.ClockStepped, ev.ClockStatus]
    assert events[0].step_ns == step_ns
    table.deal(standard_hands(GAME))
    assert isinstance(table.finish(), ev.RoundSettled)


def test_the_clock_block_keeps_the_session_from_rolling(make: Callable[..., Harness]) -> None:
    """A new journal session (a fresh table from the memory alone) must not forget a block."""
    table = make(GAME)
    assert table.machine.only_memory_carries_over()
    table.send(report(trusted=False))
    assert not table.machine.only_memory_carries_over()
    table.send(report(trusted=True))
    assert table.machine.only_memory_carries_over()
