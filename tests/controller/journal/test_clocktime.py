"""Mapping record times to corrected wall time: the nearest trusted anchor of the same boot,
its bound grown by 500 ppm of the distance, and the UNSYNC / PRE-STEP marks."""

from __future__ import annotations

from typing import Any

from controller.journal.clocktime import annotate, describe
from controller.journal.record import Record

S = 10**9
TRUE_EPOCH = 1_800_000_000 * S


def record(seq: int, mono_s: float, event: str = "round_opened",
           payload: dict[str, Any] | None = None) -> Record:
    return Record(seq=seq, ts="2026-11-23T00:00:00.000000Z", mono_ns=int(mono_s * S),
                  table_id="T", round_id=None, event_type=event, actor=None,
                  payload=payload or {}, prev_hash="0" * 64, hash="1" * 64)


def clock(seq: int, mono_s: float, *, synced: bool, boot: str = "A", step_s: float = 0,
          wall_off_s: float = 0, max_error_us: int | None = 1_000) -> Record:
    """A ClockReport input whose wall clock is ``wall_off_s`` off true time."""
    fields = {"device": "clock", "synchronised": synced, "max_error_us": max_error_us,
              "boot_id": boot, "mono_ns": int(mono_s * S),
              "wall_ns": TRUE_EPOCH + int((mono_s + wall_off_s) * S), "step_ns": int(step_s * S)}
    return record(seq, mono_s, "input_device", {"type": "ClockReport", "fields": fields})


def test_power_cut_boot_then_network_time() -> None:
    """Booted an hour slow and unsynchronised; at mono 100 s the clock steps +3600 s and is
    synchronised. Records before the step are UNSYNC and PRE-STEP and map to true time; the
    ones after are clean; the bound grows by 0.5 ms per second from the anchor."""
    records = [clock(1, 10, synced=False, wall_off_s=-3600, max_error_us=16_000_000),
               record(2, 50), clock(3, 100, synced=True, step_s=3600), record(4, 110)]
    times = annotate(records)
    before, after = times[2], times[4]
    assert before.unsynchronised and before.before_step_ns == 3600 * S
    assert before.corrected_ns == TRUE_EPOCH + 50 * S
    assert before.error_us == 1_000 + 50 * 500  # anchor 1 ms + 500 ppm of 50 s
    assert not after.unsynchronised and after.before_step_ns == 0
    assert after.corrected_ns == TRUE_EPOCH + 110 * S and after.error_us == 1_000 + 5_000
    assert describe(before) == "±26.0ms UNSYNC PRE-STEP+3600.000s"
    assert describe(after) == "±6.0ms"


def test_no_anchor_in_the_boot_means_unknown() -> None:
    """A trusted anchor of another boot never maps this boot's monotonic times."""
    records = [clock(1, 10, synced=True, boot="A"), clock(2, 5, synced=False, boot="B"),
               record(3, 6)]
    time = annotate(records)[3]
    assert time.corrected_ns is None and time.error_us is None and time.unsynchronised
    assert describe(time) == "±? UNSYNC"


def test_records_before_any_clock_reading_are_unsync() -> None:
    """An older journal, or the records before the first reading."""
    time = annotate([record(1, 1), clock(2, 2, synced=True)])[1]
    assert time.unsynchronised and time.corrected_ns is None


def test_session_started_reading_is_an_anchor() -> None:
    session = record(1, 20, "session_started", {"clock": {
        "synchronised": True, "max_error_us": 2_000, "boot_id": "A", "mono_ns": 20 * S,
        "wall_ns": TRUE_EPOCH + 20 * S}})
    time = annotate([session, record(2, 22)])[2]
    assert time.corrected_ns == TRUE_EPOCH + 22 * S and time.error_us == 2_000 + 1_000
