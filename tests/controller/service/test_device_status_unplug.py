"""Device status that is true (issue 36): after the shuffler was unplugged, ``tablectl round
status`` kept "shuffler: online ...; cannot open ...: No such file or directory" for the rest of
the shift while the screen said "online". An unplugged device is offline everywhere (the status,
its waits, the status line, ``tablectl round status``'s words, the dealer's screen) until it is
back, and then online with nothing stale beside it.

Against the real simulator on a real pty, through the service's own wiring: unplugging closes
the pty and removes the device path (as udev does), stopping the simulator does the same.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from controller.cli.client import describe
from controller.service.protocol import DEVICE_STATUS
from controller.web.dealer import dealer_view
from tests.controller.service.operator_rig import Rig, running
from tests.controller.service.test_live_burns import ShoeRig


@pytest.fixture(name="rig")
def fixture_rig(tmp_path: Path) -> Iterator[Rig]:
    with running(Rig(tmp_path)) as rig:
        rig.until(lambda: rig.operator()["state"] == "idle", what="the shuffler idle")
        yield rig


@pytest.fixture(name="shoe")
def fixture_shoe(tmp_path: Path) -> Iterator[ShoeRig]:
    with running(ShoeRig(tmp_path, "beetek")) as rig:
        yield rig


def _everywhere_offline(rig: Rig, name: str) -> None:
    """The status, its words and the screen all say offline, and what gets it back."""
    status = rig.status()
    device = status["device"]
    assert device["online"] is False, device
    assert device["operator"]["state"] == "offline", device["operator"]
    assert device["operator"]["waits_for"] == f"the {name} to come back online (cable, power)"
    assert any(w["waits_for"].startswith(f"the {name} to come back online")
               for w in status["waits"]), status["waits"]
    words = describe("round.status", status)
    assert words[1].startswith(f"{name}: offline ("), words
    assert f"{name} offline (" in rig.wiring.status_line()  # type: ignore[union-attr]
    screen = dealer_view(status)["device"]
    assert screen["online"] is False and screen["state"] == "offline", screen


def _offline(rig: Rig) -> bool:
    return rig.status()["device"]["online"] is False


def _reopen_failed(rig: Rig) -> bool:
    return "No such file or directory" in (rig.status()["device"]["last_error"] or "")


def test_an_unplugged_shuffler_is_offline_everywhere_until_it_is_back(rig: Rig) -> None:
    """Unplugged: offline in the status, the waits, ``round status``, the status line and the
    screen, and still so after the driver's reopens fail ("cannot open ...: No such file or
    directory"). Plugged back: online, idle again, everywhere."""
    rig.server.unplug()
    rig.until(lambda: _offline(rig) and _reopen_failed(rig), what="the shuffler offline")
    _everywhere_offline(rig, "shuffler")
    assert any(e.get("type") == "DeviceNoted" and "DeviceOffline" in str(e.get("detail"))
               for e in rig.published)
    rig.server.replug()
    rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline")
    rig.until(lambda: rig.operator()["state"] == "idle", what="the shuffler idle again")
    status = rig.status()
    assert status["device"]["online"] is True
    assert describe("round.status", status)[1].startswith("shuffler: online (")
    assert "shuffler online" in rig.wiring.status_line()  # type: ignore[union-attr]
    assert dealer_view(status)["device"]["online"] is True


def test_a_shuffler_back_online_carries_no_stale_error(rig: Rig) -> None:
    """The issue's words: back online, ``round status`` must not go on saying "cannot open
    ...: No such file or directory" beside "online" for the rest of the shift."""
    rig.server.unplug()
    rig.until(lambda: _offline(rig) and _reopen_failed(rig), what="a failed reopen")
    rig.server.replug()
    rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline")
    status = rig.status()
    assert status["device"]["last_error"] is None, status["device"]
    assert "cannot open" not in describe("round.status", status)[1]
    assert dealer_view(status)["device"]["error"] is None


def test_a_stopped_simulator_is_offline_until_it_is_back(rig: Rig) -> None:
    """The simulator stopped (its pty closed, its path gone) is an unplug too."""
    rig.server.close()
    rig.until(lambda: _offline(rig) and _reopen_failed(rig), what="the shuffler offline")
    _everywhere_offline(rig, "shuffler")


def test_an_unplugged_shoe_is_offline_not_waiting_for_the_dealer(shoe: ShoeRig) -> None:
    """A shoe has no operator machine: it used to say "waits for the dealer to draw" while
    unplugged. Now offline with the way back, and the dealer draws again once it is back."""
    assert shoe.operator()["state"] == "dealer_draws"
    shoe.server.unplug()
    shoe.until(lambda: _offline(shoe) and _reopen_failed(shoe), what="the shoe offline")
    _everywhere_offline(shoe, "shoe")
    shoe.server.replug()
    shoe.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline")
    operator: Mapping[str, Any] = shoe.operator()
    assert operator["state"] == "dealer_draws" and shoe.status()["device"]["online"] is True


def test_the_watchers_are_told_when_the_device_side_changes(rig: Rig) -> None:
    """The device operator takes a device event after the table has published the round event
    it caused, so a screen that read ``round.status`` on that event could keep the device's old
    state (a jam's fault missing from its hold, no clear-fault button: the dealer's screen
    test failed so on a loaded machine). The watchers are sent a ``DeviceStatus`` line each
    time the device side of the status changes: here when the jam's fault is raised, and the
    status read after that line shows it."""
    from firmware_sim.faults import FaultKind, FaultSpec

    told = sum(1 for e in rig.published if e.get("type") == DEVICE_STATUS)
    rig.sim.inject(FaultSpec(FaultKind.JAM))
    rig.until(lambda: "jam" in rig.operator()["faults"], what="the jam on the operator",
              timeout=60)
    rig.until(lambda: sum(1 for e in rig.published if e.get("type") == DEVICE_STATUS) > told,
              what="a DeviceStatus line after the jam", timeout=60)
    line = next(e for e in reversed(rig.published) if e.get("type") == DEVICE_STATUS)
    assert line == {"type": DEVICE_STATUS, "device": "shuffler"}
    assert "jam" in rig.status()["device"]["operator"]["faults"]
