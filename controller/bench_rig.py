"""The bench's hardware: seeded simulators on real ptys, the real drivers, the table thread and
(optionally) the surveillance journal, opened and closed together.

The simulators run with zero shuffle and dispense times and no automatic hand-taking: the bench
operator is the dealer, so it ticks the simulator's clock right after a command is acknowledged
and lifts the presented hand itself. That removes the byte server's 50 ms tick from every step
without changing a byte on the wire.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from controller.games.cards import Card
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.layout import TableLayout
from controller.table.table import Table
from drivers.errors import DriverError
from drivers.framed.messages import DeviceState
from drivers.shoe import open_shoe
from drivers.shuffler import Shuffler
from firmware_sim.beetek import BeeTekShoeSim
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.framed import bind_server
from firmware_sim.serve import PtyServer
from firmware_sim.shuffler import ShufflerSim

log = structlog.get_logger("controller.bench")
BACKOFF = (0.02, 0.2)


class BenchRig:
    """``with BenchRig(game, layout, subscriber, seed, journal_dir) as rig: ...``."""

    def __init__(self, game: str, layout: TableLayout, subscriber: Callable[[ev.RoundEvent], None],
                 seed: int, journal_dir: Path | None = None) -> None:
        self.live = layout.device.value == "live"
        self.layout = layout
        self._tmp = tempfile.TemporaryDirectory(prefix="tablectl-bench-")
        self.table = Table(layout, [subscriber])
        self.writer: Any = None
        if journal_dir is not None:
            self.writer = _open_journal(journal_dir, layout.table_id)
        if self.writer is not None:
            writer = self.writer
            self.table.tap(lambda item: writer.append_event(item,
                                                            actor=getattr(item, "actor", None)))
            self.table.subscribe(writer.append_event)
        link = Path(self._tmp.name) / ("shoe" if self.live else "shuffler")
        if self.live:
            self.sim: Any = BeeTekShoeSim(seed=seed)
        else:
            self.sim = ShufflerSim(seed=seed, shuffle_seconds=0.0, dispense_seconds=0.0,
                                   take_seconds=None)
        self.server = PtyServer(self.sim, link=link, name="bench")
        if self.live:
            self.sim.bind_link(self.server)
            self.driver: Any = open_shoe("beetek", str(link), self.table.inputs, backoff=BACKOFF)
        else:
            bind_server(self.sim, self.server)
            self.driver = Shuffler(str(link), self.table.inputs,  # type: ignore[arg-type]
                                   backoff=BACKOFF)
        self.devices = 1

    def __enter__(self) -> BenchRig:
        try:
            self.table.start()
            self.server.start()
            self.driver.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.driver.close()
        if hasattr(self.sim, "close"):
            self.sim.close()
        self.server.close()
        self.table.close()
        if self.writer is not None:
            self.writer.close()
        self._tmp.cleanup()

    # the physical world -------------------------------------------------------------------
    def _tick(self) -> None:
        self.sim.tick(time.monotonic())

    def shuffle(self, put: Callable[[cmd.Command], None]) -> bool:
        """Shuffle for a new round. The shuffler reports ShuffleDone; in the studio a fresh
        deck goes in the shoe and the dealer confirms the shuffle."""
        if self.live:
            self.sim.shuffle()
            self.driver.new_shoe()
            put(cmd.ConfirmShuffle(actor="bench-dealer", role=cmd.Role.DEALER))
            return True
        self.clear_faults()
        try:
            self.driver.end_round()  # SHUFFLE only from IDLE (docs/protocols.md 5.2)
            self.driver.shuffle()
        except DriverError as error:
            log.info("bench shuffle refused", error=str(error))
            return False
        self._tick()
        return True

    def deliver(self, *, burn: bool = False) -> bool:
        """Deal the next set (shuffler) or card (shoe). True when something came out, which the
        operator then waits for (the set lifted: HandTaken; the card: its assignment)."""
        if self.live:
            self.sim.draw(burn=burn)
            return True
        before = self.sim.hand_number
        self.driver.dispense_hand()
        self._tick()
        if self.sim.hand_number > before:
            self.sim.take_hand()
            return True
        return False

    def inject(self, spec: FaultSpec) -> None:
        if self.live and spec.kind is FaultKind.DISCONNECT:
            # pull the shoe's cable between two cards: the Bee-Tek simulator's own fault
            # unplugs right after a card's line, which the pty then discards unread
            self.sim.disconnect_for(spec.arg if spec.arg is not None else 0.5)
            return
        self.sim.inject(spec)

    def clear_faults(self) -> None:
        """The dealer clears the device's alarms (jam cleared, card turned down, ...)."""
        if self.live or not self.sim.faults:
            return
        try:
            self.driver.clear_fault()
        except DriverError as error:
            log.info("bench clear_fault failed", error=str(error))

    def lost_cards(self) -> bool:
        """A rebooted shuffler has no deck until the next shuffle."""
        return not self.live and self.sim.state() is DeviceState.IDLE

    def cards_in_hand(self, n: int) -> tuple[Card, ...]:
        """The last ``n`` cards out of the shoe, as the supervisor sees them on the table."""
        if not self.live:
            return ()
        return tuple(self.sim.dealt[-n:])

    def journal_summary(self) -> dict[str, Any] | None:
        if self.writer is None:
            return None
        return {"directory": str(self.writer.directory), "records": self.writer.seq,
                "last_hash": self.writer.last_hash}


def _open_journal(directory: Path, table_id: str) -> Any:
    """The surveillance journal, when the journal package is installed (issue 5)."""
    try:
        from controller.journal.policy import Durability
        from controller.journal.writer import JournalWriter
    except ImportError:
        log.warning("no journal package: --journal-dir ignored")
        return None
    return JournalWriter(directory, table_id=table_id, durability=Durability.NONE)
