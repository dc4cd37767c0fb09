"""The protection monitors across a restart of the service, through its own wiring (the real
``Wiring``, its warming guard, journal and table thread) against a shuffler on a real pty that
repeats every second deck's order: one fault, one alert, though the service restarted in the
middle of the episode and READY no longer waits for the warm-up (docs/game-protection.md,
"Restart")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.journal import iter_records
from controller.journal.replay import replay_records
from firmware_sim.shuffler import ShufflerSim
from tests.controller.service.operator_rig import Rig

GAME = "rws-nc-three-pictures"


@pytest.fixture(name="rig")
def fixture_rig(tmp_path: Path) -> Iterator[Rig]:
    sim = ShufflerSim(seed=11, shuffle_seconds=0.0, dispense_seconds=0.0, take_seconds=None,
                      shuffle_model="repeated-order")
    rig = Rig(tmp_path, GAME, sim=sim)
    rig.start()
    try:
        _online(rig)
        yield rig
    finally:
        rig.close()


def _online(rig: Rig) -> None:
    rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline", timeout=60.0)


def _deal(rig: Rig, number: int) -> None:
    rig.open_and_close(number)
    rig.wait("DealComplete", timeout=60.0)
    assert rig.finish()[-1]["type"] == "RoundSettled"


def _repeat_alerts(journal: Path) -> list[int]:
    return [r.seq for r in iter_records([journal]) if r.event_type == "protection_alert"
            and r.payload["monitor"] == "repeat"]


def test_a_restart_mid_episode_alerts_once(rig: Rig, tmp_path: Path) -> None:
    """Decks 2, 4 and 6 repeat the deck before them. Deck 2's repeat is alerted; the service
    restarts after deck 3; deck 4 is dealt at once (the table does not wait for the monitors'
    warm-up) and decks 4 and 6 are the same episode, known from the journal: not alerted
    again. A guard that started afresh would have alerted deck 6 (deck 5 would be its first
    repeat's original). The journal replays."""
    journal = tmp_path / "journal"
    for number in (1, 2, 3):
        _deal(rig, number)
    assert len(_repeat_alerts(journal)) == 1
    rig.close_service()
    rig.open_service()
    _online(rig)
    for number in (4, 5, 6):
        _deal(rig, number)
    assert rig.wiring is not None and rig.wiring.protection is not None
    protection = rig.wiring.protection
    rig.until(protection.warmed.is_set, timeout=60.0, what="the protection warm-up")
    assert protection.decks_fed == 3
    rig.close_service()
    assert len(_repeat_alerts(journal)) == 1
    assert replay_records(list(iter_records([journal]))).divergences == []
