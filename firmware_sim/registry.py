"""The simulated devices a table service opens for ``device.url = "sim"``, found by name.

The service imports no simulator: it asks for the ``pty`` entry point of the
``tablectl.simulators`` group, which this package registers (``pyproject.toml``), as python-can
finds an interface by name and pyserial a URL scheme's handler. An install without this package
has no simulated table, and a simulator is chosen here, where the simulators are, not by an
if/elif in the service's wiring.

:func:`open_pty` builds the simulator of a kind and dialect and serves it on a real pty (not
started); the service then opens its *real* driver on :attr:`PtyEndpoint.link`, exactly as on a
table. The simulators run with zero shuffle and dispense times and no automatic hand-taking: the
service's device operator and its simulated dealer take those parts. Idle, the byte server ticks
once per heartbeat, not faster (an idle table must not keep the Pi awake).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Any

from firmware_sim.framed import HEARTBEAT_SECONDS, bind_server
from firmware_sim.serve import PtyServer


class SimulatorUnavailable(ValueError):
    """No pty simulator for that kind and dialect (the message says what to use instead)."""


@dataclass(slots=True)
class PtyEndpoint:
    """A simulator, the pty server that serves it, and the stable link a driver opens (a
    replugged simulator comes back on a new pty; the link follows it, as a udev by-id link
    follows a real device)."""

    sim: Any
    server: PtyServer
    link: str
    scratch: tempfile.TemporaryDirectory[str]

    def close(self) -> None:
        self.server.close()
        self.scratch.cleanup()


def open_pty(kind: str, dialect: str | None, *, name: str, seed: int | None = None,
             deck: str | None = None, shuffle_model: str = "fair") -> PtyEndpoint:
    """The simulated ``kind`` (``shuffler`` or ``shoe``; a shoe of ``dialect`` ``framed``,
    ``scanner`` or ``beetek``) on a pty, not yet started."""
    sim, framed = _simulator(kind, dialect, seed=seed, deck=deck, shuffle_model=shuffle_model)
    scratch = tempfile.TemporaryDirectory(prefix="tablectl-sim-")
    link = os.path.join(scratch.name, name)
    server = PtyServer(sim, link=link, name=name, idle_tick=HEARTBEAT_SECONDS,
                       tick_on_command=True)
    if framed:
        bind_server(sim, server)
    else:
        sim.bind_link(server)
    return PtyEndpoint(sim, server, link, scratch)


def _simulator(kind: str, dialect: str | None, *, seed: int | None, deck: str | None,
               shuffle_model: str) -> tuple[Any, bool]:
    """The simulator and whether it speaks the framed protocol."""
    if kind == "shuffler":
        from firmware_sim.shuffle_models import ShuffleModel
        from firmware_sim.shuffler import ShufflerSim

        if shuffle_model not in {model.value for model in ShuffleModel}:
            raise SimulatorUnavailable(
                f"no shuffling model {shuffle_model!r}; use one of "
                f"{', '.join(model.value for model in ShuffleModel)}")
        return ShufflerSim(seed, shuffle_seconds=0.0, dispense_seconds=0.0, take_seconds=None,
                           shuffle_model=shuffle_model), True
    if dialect == "framed":
        from firmware_sim.shoe_framed import FramedShoeSim

        return FramedShoeSim(seed), True
    if dialect == "scanner":
        from firmware_sim.scanner import ScannerShoeSim

        return ScannerShoeSim(seed, deck=deck or "generic-code128"), False
    if dialect == "beetek":
        from firmware_sim.beetek import BeeTekShoeSim

        return BeeTekShoeSim(seed), False
    raise SimulatorUnavailable(
        f"the {dialect or '?'} dialect has no pty simulator (its simulator is a pyusb "
        "backend); use dialect 'scanner' for a simulated barcode shoe")


__all__ = ["PtyEndpoint", "SimulatorUnavailable", "open_pty"]
