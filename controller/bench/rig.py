"""The bench's table: the service's own :class:`~controller.service.wiring.pipeline.Wiring` (the
code path of ``tablectl run``) on a seeded simulated device, and the physical world the actors
touch.

Nothing here commands a device. The journal, recovery, the table thread, the real driver on a
real pty with deferred acknowledgement and the product's device operator are all the service's;
the config is made in code (``url = "sim"``, the bench's journal directory or a temporary one,
durability ``none``: the bench measures the table, not the SD card). What is left to the bench
is what the physical world does at a table: a fault appearing in the device, the cards the
supervisor sees on the layout. (The service's own simulated dealer lifts the hands.)
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from collections.abc import Callable, Mapping
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
from firmware_sim.faults import FaultKind, FaultSpec

log = structlog.get_logger("controller.bench")
TABLE_ID = "bench-1"


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
                         journal=JournalConfig(journal_dir, durability=Durability.NONE,
                                               ephemeral=ephemeral),
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
        self.wiring = Wiring(bench_config(game, seed, directory, shuffler,
                                          ephemeral=journal_dir is None),
                             publish or (lambda _event: None),
                             observe=observe)
        self.summary: dict[str, Any] | None = None

    def __enter__(self) -> BenchRig:
        try:
            self.wiring.start()
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

    # the physical world -------------------------------------------------------------------
    def inject(self, spec: FaultSpec) -> None:
        """The device misbehaves (armed faults fire at the next shuffle, set or card)."""
        if self.live and spec.kind is FaultKind.DISCONNECT:
            # pull the shoe's cable between two cards: the Bee-Tek simulator's own fault
            # unplugs right after a card's line, which the pty then discards unread
            self.sim.disconnect_for(spec.arg if spec.arg is not None else 0.5)
            return
        self.sim.inject(spec)

    def count_by_hand(self) -> int:
        """The deck counted by hand (``tablectl deck counted N``): every physical card of it."""
        return int(self.sim.count_by_hand())

    def cards_in_hand(self, n: int) -> tuple[Card, ...]:
        """The last ``n`` cards out of the shoe, as the supervisor sees them on the table."""
        if not self.live:
            return ()
        return tuple(self.sim.dealt[-n:])


__all__ = ["BenchRig", "bench_config"]
