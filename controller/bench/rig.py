"""The bench's table: the service's own :class:`~controller.service.wiring.pipeline.Wiring` (the
code path of ``tablectl run``) on a seeded simulated device, and the physical world the actors
touch.

Nothing here commands a device. The journal, recovery, the table thread, the real driver on a
real pty with deferred acknowledgement and the product's device operator are all the service's;
the config is made in code (``url = "sim"``, the bench's journal directory or a temporary one,
durability ``none``: the bench measures the table, not the SD card). What is left to the bench
is what the physical world does at a table: a fault appearing in the device (at once, or
planned on the device's own count of hands or cards), the cards the supervisor sees on the
layout, and whether the machines are still moving (:meth:`BenchRig.settle`: the people at the
bench act only once everything the device side was doing has reached the journal, so two runs
of one seed act at the same points). (The service's own simulated dealer lifts the hands.)
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import structlog

from controller.games.cards import Card
from controller.games.catalog import get_game
from controller.games.rules import GameId
from controller.journal.policy import Durability
from controller.protection.feed import Feed
from controller.service.config import (
    SIM_URL, DeviceConfig, DeviceKind, JournalConfig, ServiceConfig, ShoeDialect,
)
from controller.service.policy import ClockPolicy, Unsynchronised
from controller.service.wiring.tablethread import InputSubscriber
from controller.service.wiring.pipeline import Wiring
from controller.table import commands as cmd
from controller.table import events as ev
from drivers import events as dev
from firmware_sim.faults import FaultSpec

log = structlog.get_logger("controller.bench")
TABLE_ID = "bench-1"
SETTLE_SECONDS = 60.0
"""The longest the people wait for the device side to settle (a reconnect takes well under a
second; a loaded machine many times that): generous, so that only a device that never settles
reaches it. Then they act anyway, and the run counts it (``unsettled``)."""
POLL_SECONDS = 0.002
"""How often :meth:`BenchRig.settle` looks again: the acknowledgements it waits for arrive on
the device's byte link, which no queue of ours carries."""
PROBE_SECONDS = 30.0
"""How long one look waits for the table thread to work through its queue."""
LINK_EVENTS = (dev.DeviceOnline, dev.DeviceOffline, dev.DeviceRebooted, dev.LinkError)
"""A device's inputs that are its link's state, not something it said."""


def bench_config(game: str, seed: int, journal_dir: Path, shuffler: str = "fair", *,
                 ephemeral: bool = False) -> ServiceConfig:
    """The service config of a bench table: every box of ``game``, its simulated device
    (``shuffler``: its shuffle model). ``ephemeral``: the journal is a temporary directory
    nobody reviews (no HMAC warning)."""
    rules = get_game(game)
    if rules.id is GameId.LIVE_3P:
        device = DeviceConfig(DeviceKind.LIVE, SIM_URL, ShoeDialect.BEETEK, seed=seed)
    else:
        device = DeviceConfig(DeviceKind.SHUFFLER, SIM_URL, seed=seed, shuffle_model=shuffler)
    return ServiceConfig(source="<tablectl bench>", table_id=TABLE_ID, game=rules.id,
                         boxes=rules.positions, device=device,
                         # no background check: its record would land wherever the clock
                         # has it (a minute after READY), not at a point of the table's own;
                         # `tablectl journal verify` checks a bench journal afterwards
                         journal=JournalConfig(journal_dir, durability=Durability.NONE,
                                               ephemeral=ephemeral, background_check_hours=0),
                         # a bench is not reviewed against camera footage: rounds open whatever
                         # the clock says; the journal still records its quality
                         clock=ClockPolicy(Unsynchronised.ALLOW),
                         # the simulated shuffler is loaded in pack order at every shuffle
                         protection_feed=Feed.NEW_DECK)


class BenchRig:
    """``with BenchRig(game, seed, journal_dir, observe) as rig: rig.put(command) ...``."""

    def __init__(self, game: str, seed: int, journal_dir: Path | None,
                 observe: InputSubscriber, shuffler: str = "fair",
                 publish: Callable[[Mapping[str, Any]], None] | None = None) -> None:
        self.live = get_game(game).id is GameId.LIVE_3P
        self.journal_dir = journal_dir
        self._tmp = None if journal_dir is not None else \
            tempfile.TemporaryDirectory(prefix="tablectl-bench-")
        directory = journal_dir if journal_dir is not None else Path(self._tmp.name)  # type: ignore[union-attr]
        self.observe = observe
        self.wiring = Wiring(bench_config(game, seed, directory, shuffler,
                                          ephemeral=journal_dir is None),
                             publish or (lambda _event: None),
                             observe=self._observe)
        self.summary: dict[str, Any] | None = None
        self.heard = 0
        """What the shoe said that the table has taken in (its inputs other than its link's
        state): the shoe's own count (``said``) catches up with it once nothing is in flight."""
        self._pause = threading.Event()

    def __enter__(self) -> BenchRig:
        try:
            self.wiring.start()
            protection = self.wiring.protection
            if protection is not None and not protection.warmed.wait(SETTLE_SECONDS):
                # the monitors hold the first round's cards until warmed, and their findings
                # on those come late: no round before they are ready
                log.warning("bench: protection monitors not warmed", seconds=SETTLE_SECONDS)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        writer = self.wiring.writer
        self.wiring.close()
        # after the close: the count includes the last records (journal_closed), as verify's
        if writer is not None and self.journal_dir is not None:
            self.summary = {"directory": str(writer.directory), "records": writer.seq,
                            "last_hash": writer.last_hash}
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    @property
    def sim(self) -> Any:
        device = self.wiring.device
        assert device is not None and device.sim is not None
        return device.sim

    def put(self, command: cmd.Command) -> None:
        """A command given at the table, as a control client's goes to the table thread."""
        table = self.wiring.table
        assert table is not None
        table.put(command)

    def operator_status(self) -> dict[str, Any] | None:
        """The device operator's part of ``tablectl round status``."""
        device = self.wiring.device_status()
        operator = device.get("operator")
        return {**operator, "device": device["name"]} if operator else None

    def waits(self) -> str:
        """What ``tablectl round status`` says the table waits for, and the way out."""
        status = self.wiring.status()
        device = status.get("device") or {}
        waits = "; ".join(f"{w['waits_for']}: {w['way_out']} ({w['role']})"
                          for w in status.get("waits", ()))
        return f"{waits}; device operator: {device.get('operator')}; " \
               f"last error: {device.get('operator_error')}"

    def device_online(self) -> bool:
        """What ``tablectl round status`` shows: is the dealing device connected."""
        return bool(self.wiring.device_status().get("online"))

    def inputs(self) -> int:
        """Inputs the table has handled so far (``round status``'s ``inputs``): progress."""
        table = self.wiring.table
        return table.snapshot.inputs if table is not None else 0

    # is anything still moving? ----------------------------------------------------------------
    def _observe(self, item: object, events: list[ev.RoundEvent]) -> None:
        """On the table thread, before the device operator: count what the shoe said, then
        the bench's own observer."""
        device = self.wiring.device
        if self.live and device is not None and isinstance(item, dev.DeviceEvent) \
                and item.device == device.name and not isinstance(item, LINK_EVENTS):
            self.heard += 1
        self.observe(item, events)

    def settled(self) -> bool:
        """Nothing of the device side is moving: the table has handled every input queued (and
        its subscribers have seen it), the device operator and the simulated dealer have acted
        on all of them and no command is to be tried again, the device is connected and the
        table has it online, and everything the simulator said is in the journal (the framed
        shuffler's events all acknowledged, which the journal does once it has recorded them;
        every line of the shoe heard). What happens next waits for a person, or for nothing."""
        wiring = self.wiring
        table, operator, dealer = wiring.table, wiring.operator, wiring.sim_dealer
        if table is None or operator is None or not table.probe(PROBE_SECONDS):
            return False
        if operator.busy or (dealer is not None and dealer.busy):
            return False
        if table.snapshot.offline or not self.device_online():
            return False
        sim = self.sim
        if not sim.quiet:
            return False
        return not self.live or sim.said == self.heard

    def settle(self, bound: float = SETTLE_SECONDS) -> bool:
        """Wait (at most ``bound`` seconds) until the device side has settled
        (:meth:`settled`) and stays so while the table thread passes a marker: the people
        act after that, at the same point of the journal every run. ``False``: it did not."""
        deadline = time.monotonic() + bound
        while True:
            before = self.inputs()
            if self.settled() and self.settled() and self.inputs() == before:
                return True
            if time.monotonic() > deadline:
                log.warning("bench: the device side did not settle", seconds=bound,
                            status=self.waits())
                return False
            self._pause.wait(POLL_SECONDS)

    # the physical world -------------------------------------------------------------------
    def inject(self, spec: FaultSpec) -> None:
        """The device misbehaves now (an armed fault fires at the next shuffle, set or card)."""
        self.sim.inject(spec)

    def plan(self, spec: FaultSpec | None, at: int = 1) -> None:
        """The device misbehaves at its own event ``at`` (1-based, counted by the device):
        the shuffler as hand ``at`` of the deal is asked for, the shoe as card ``at`` since
        its shuffle is drawn, burns included. ``None`` drops a plan that has not fired."""
        if self.live:
            self.sim.plan(spec, card=at)
        else:
            self.sim.plan(spec, hand=at)

    def count_by_hand(self) -> int:
        """The deck counted by hand (``tablectl deck counted N``): every physical card of it."""
        return int(self.sim.count_by_hand())

    def cards_in_hand(self, n: int) -> tuple[Card, ...]:
        """The last ``n`` cards out of the shoe, as the supervisor sees them on the table."""
        if not self.live:
            return ()
        return tuple(self.sim.dealt[-n:])


__all__ = ["BenchRig", "bench_config"]
