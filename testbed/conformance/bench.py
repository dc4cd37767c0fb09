"""Run the conformance kit against a simulated device over a real pty or TCP socket, with a
simulated person doing the physical steps: shared by the kit's tests and
``benchmarks/conformance.py``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from drivers.conformance import Result, run_suite
from drivers.conformance.session import Action, Scenario
from drivers.conformance.shoe import SCENARIOS as SHOE_SCENARIOS
from drivers.conformance.shuffler import SCENARIOS as SHUFFLER_SCENARIOS
from drivers.transport import SerialTransport
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.framed import FramedSimDevice
from testbed.serving import serve

SIM_PERSON_SECONDS = 5.0
"""A simulated person acts at once: a physical step that shows nothing in 5 s never will."""
SIM_LIFT_SECONDS = 0.1


class SimDealer:
    """The person at a simulated device: does each physical step through the simulator."""

    def __init__(self, sim: FramedSimDevice) -> None:
        self.sim = sim
        self.done: list[Action] = []
        self._actions: dict[Action, Callable[[], None]] = {
            Action.CAUSE_FAULT: lambda: sim.inject(FaultSpec(FaultKind.DOOR_OPEN)),
            Action.DRAW_CARD: lambda: sim.draw(),  # type: ignore[attr-defined]
            Action.OPEN_LID: lambda: sim.open_lid(),  # type: ignore[attr-defined]
            Action.POWER_CYCLE: lambda: sim.reboot(),
            Action.LIFT_HANDS: self._lift_hands,
        }

    def _lift_hands(self) -> None:
        """From now on the dealer lifts each presented hand (the one waiting too)."""
        self.sim.take_seconds = SIM_LIFT_SECONDS  # type: ignore[attr-defined]
        self.sim.take_hand()  # type: ignore[attr-defined]

    def act(self, action: Action, instruction: str) -> bool:
        self.done.append(action)
        self._actions.get(action, lambda: None)()
        return True


def scenarios_for(device: str, rows: Sequence[str] | None = None) -> tuple[Scenario, ...]:
    every = SHUFFLER_SCENARIOS if device == "shuffler" else SHOE_SCENARIOS
    return every if rows is None else tuple(s for s in every if s.key in rows)


def run_kit(sim: FramedSimDevice, kind: str, tmp_path: Path,
            scenarios: Sequence[Scenario], *, dealer: bool = True) -> dict[str, Result]:
    """Every row's result, by scenario key, for ``sim`` served on a ``kind`` link."""
    served = serve(sim, kind, tmp_path)
    try:
        results = run_suite(scenarios, SerialTransport(served.url),
                            operator=SimDealer(sim) if dealer else None,
                            person_seconds=SIM_PERSON_SECONDS)
    finally:
        served.server.close()
    assert [r.key for r in results] == [s.key for s in scenarios]
    return {r.key: r for r in results}
