"""A service wiring (the real :class:`Wiring`, as ``tablectl run`` builds it) dealing from a
firmware_sim shuffler served on a REAL pty that the service opens as a real device path.

The test plays the people: the dealer lifting hands (``sim.take_hand()``), the dealer and
supervisor verbs (table commands with their roles), and the faults (``sim.inject``). Every wait
is on the published event stream or on a condition, with a timeout; nothing sleeps.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from controller.service.config import parse_config
from controller.service.wiring.pipeline import Wiring
from controller.table import commands as cmd
from firmware_sim.framed import bind_server
from firmware_sim.serve import PtyServer
from firmware_sim.shuffler import ShufflerSim
from tests.controller.service.conftest import ALLOW_CLOCK
from tests.waiting import WaitTimeout, wait_draining

DEALER = {"actor": "dealer:test", "role": cmd.Role.DEALER}
SUPERVISOR = {"actor": "supervisor:test", "role": cmd.Role.SUPERVISOR}
WAGERS = {"rws-nc-three-pictures": [("1", "main", 500), ("2", "main", 1000)],
          "rws-three-card-poker": [("1", "ante", 500), ("2", "pair_plus", 500)]}


def toml(tmp: Path, game: str, url: str, table: str = "", extra: str = "") -> str:
    """The service's config; ``table``: more ``[table]`` keys, ``extra``: more sections."""
    return (f'[table]\nid = "OP-1"\ngame = "{game}"\n{table}\n[device]\nkind = "shuffler"\n'
            f'url = "{url}"\n\n[journal]\ndirectory = "{tmp / "journal"}"\n'
            f'durability = "none"\n\n[control]\nsocket = "{tmp / "control.sock"}"\n'
            f'socket_group = ""\n' + ALLOW_CLOCK + extra)


class Rig:
    """``Rig(tmp, game, sim=ShufflerSim(...))``; ``start()``, ``close()``."""

    def __init__(self, tmp: Path, game: str = "rws-nc-three-pictures", *,
                 sim: ShufflerSim | None = None, auto_take: bool = True,
                 table_toml: str = "", extra_toml: str = "") -> None:
        self.tmp, self.game = tmp, game
        self.table_toml, self.extra_toml = table_toml, extra_toml
        self.sim = sim or ShufflerSim(seed=7, shuffle_seconds=0.0, dispense_seconds=0.0,
                                      take_seconds=None)
        self.server = PtyServer(self.sim, name="shuffler", link=tmp / "shuffler")
        bind_server(self.sim, self.server)
        self.events: queue.Queue[Mapping[str, Any]] = queue.Queue()
        self.seen: list[Mapping[str, Any]] = []
        """Events the test has waited through."""
        self.published: list[Mapping[str, Any]] = []
        """Every event the service published, in order (appended on the table thread)."""
        self.auto_take = auto_take
        self.wiring: Wiring | None = None
        self._stop = threading.Event()

    def start(self) -> Rig:
        self.server.start()
        self.open_service()
        return self

    def open_service(self) -> None:
        config = parse_config(toml(self.tmp, self.game, str(self.tmp / "shuffler"),
                                   self.table_toml, self.extra_toml),
                              source=str(self.tmp / "tablectl.toml"))
        self.wiring = Wiring(config, self._publish)
        self.wiring.start()

    def close_service(self) -> None:
        if self.wiring is not None:
            self.wiring.close()
            self.wiring = None

    def close(self) -> None:
        self.close_service()
        self.server.close()

    def _publish(self, event: Mapping[str, Any]) -> None:
        self.published.append(event)
        self.events.put(event)
        if self.auto_take and event.get("type") in ("CardAssigned", "CardIgnored",
                                                    "IrregularityRuled", "SupervisorRequired"):
            self.sim.take_hand()  # the dealer moves the presented set to its box

    # the people -----------------------------------------------------------------------------
    def send(self, command: cmd.Command) -> list[Mapping[str, Any]]:
        assert self.wiring is not None and self.wiring.table is not None
        ticket = self.wiring.table.command(command, 5.0)
        assert ticket is not None and ticket.error is None
        return [{"type": type(e).__name__, **vars_of(e)} for e in ticket.events]

    def open_and_close(self, number: int = 1) -> None:
        self.send(cmd.OpenRound(**DEALER))
        for index, (position, bet, amount) in enumerate(WAGERS[self.game]):
            self.send(cmd.PlaceWager(**DEALER, wager_id=f"w{number}-{index}",
                                     position=position, bet=bet, amount=amount))
        self.send(cmd.CloseBets(**DEALER))

    def finish(self) -> list[Mapping[str, Any]]:
        """Decisions (RWS-3CP: everyone plays), reveal, settle."""
        status = self.status()
        for position in status.get("decisions_due", []):
            self.send(cmd.PlayerDecision(**DEALER, position=position, choice=cmd.Choice.PLAY))
        out: list[Mapping[str, Any]] = []
        if self.status()["state"] == "dealt":
            out += self.send(cmd.RevealDealer(**DEALER))
        out += self.send(cmd.SettleRound(**DEALER))
        return out

    def status(self) -> dict[str, Any]:
        assert self.wiring is not None and self.wiring.handler is not None
        return {**self.wiring.table.snapshot.to_json(),  # type: ignore[union-attr]
                **self.wiring.status()}

    def operator(self) -> dict[str, Any]:
        return self.status()["device"]["operator"]

    # waiting --------------------------------------------------------------------------------
    def stream(self, timeout: float = 10.0) -> Iterator[Mapping[str, Any]]:
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out; last events: {self.seen[-8:]}; "
                                     f"status: {self.status()}")
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(event)
            yield event

    def wait(self, *types: str, timeout: float = 10.0,
             where: Callable[[Mapping[str, Any]], bool] = lambda e: True) -> Mapping[str, Any]:
        for event in self.stream(timeout):
            if event.get("type") in types and where(event):
                return event
        raise AssertionError("unreachable")

    def until(self, condition: Callable[[], bool], timeout: float = 10.0,
              what: str = "condition") -> None:
        """Wait for a condition that events announce (:func:`tests.waiting.wait_draining`); the
        events that came meanwhile go to :attr:`seen`, and a wait that runs out names the
        table's status."""
        try:
            wait_draining(self.events, condition, what, timeout=timeout, seen=self.seen)
        except WaitTimeout as error:
            raise AssertionError(f"{error}; status: {self.status()}") from error


def vars_of(event: object) -> dict[str, Any]:
    return {name: getattr(event, name) for name in getattr(event, "__dataclass_fields__", {})}


ONLINE_SECONDS = 60.0
"""Generous: a bound for the device's DeviceOnline on a loaded machine, not a measure."""


@contextmanager
def running(rig: Rig) -> Iterator[Rig]:
    """``rig`` started and its device online (the table took its ``DeviceOnline``), closed
    after: what a test of the wired service starts from."""
    rig.start()
    try:
        rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline",
                 timeout=ONLINE_SECONDS)
        yield rig
    finally:
        rig.close()
