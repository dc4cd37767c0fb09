"""The end-to-end rig: simulated devices served over REAL ptys -> the real drivers -> the
service's own table thread (:class:`~controller.service.wiring.tablethread.TableThread` around
the recovered :class:`~controller.journal.recorder.JournaledTable`, device events and operator
commands on its one queue, as the service wires it) -> the journal -> settlement. Every simulator
is seeded, so the dealt cards (and so every net) are known exactly; every journal the rig wrote
verifies and replays without divergence when the test ends.

Synchronisation is by events only: a test waits (with a timeout) for the round event that shows
the table has taken what it sent, or for the table thread to pass a marker; nothing sleeps.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from controller.games.cards import Card, parse_cards
from controller.journal import Durability, JournalWriter, iter_records, verify
from controller.journal.recovery import recover
from controller.journal.replay import replay_records
from controller.service.wiring.tablethread import TableThread
from controller.settlement.model import Result
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.layout import TableLayout
from drivers.shoe import open_shoe
from drivers.shuffler import Shuffler
from firmware_sim.beetek import BeeTekShoeSim
from firmware_sim.faults import FaultSpec
from firmware_sim.framed import bind_server
from firmware_sim.scanner import ScannerShoeSim
from firmware_sim.serve import PtyServer
from firmware_sim.shoe_framed import FramedShoeSim
from firmware_sim.shuffler import ShufflerSim

WAIT = 10.0
SEED = 11
DEALER = {"actor": "dana", "role": cmd.Role.DEALER}
SUPERVISOR = {"actor": "sam", "role": cmd.Role.SUPERVISOR}
FAST = (0.05, 0.2)

SHUFFLER_GAMES = ["rws-nc-three-pictures", "mbs-three-pictures", "mbs-royal-three-pictures",
                  "rws-three-card-poker"]
MANUAL_GAMES = ["rws-nc-three-pictures", "mbs-royal-three-pictures", "rws-three-card-poker"]
"""Games whose text has a manual-device procedure (RWS-NC3P 3.12, MBS-R3P 3.12.1, RWS-3CP 3.6)."""

# The seeded decks (SEED = 11), as the simulators will deal them.
SHUFFLER_DECK = parse_cards(["2H", "6C", "3D", "JH", "4H", "4C", "2D", "6H", "KC", "6S", "8C", "TS", "5S", "AC", "7H"])
FRAMED_DECK = parse_cards(["2H", "6C", "3D", "JH", "4H", "4C", "2D", "6H", "KC", "6S", "8C", "TS", "5S", "AC", "7H", "QS"])
LINE_DECK = parse_cards(["7H", "6S", "6H", "4H", "AD", "7D", "JC", "QS", "TS", "5S", "TD", "2H", "KH", "TH", "7C", "JH", "9S", "8C", "3D", "3S"])
"""Scanner and Bee-Tek shoes share :class:`firmware_sim.shoe_deck.SimShoe`'s seeded shuffle."""


def shuffler_deck(shuffles: int) -> tuple[Card, ...]:
    """The deck of the ``shuffles``-th shuffle of a ShufflerSim(seed=SEED) that never rebooted."""
    twin = ShufflerSim(seed=SEED)
    for _ in range(shuffles):
        twin._finish_shuffle()
    return tuple(twin._deck)


def first_bet(game: str) -> str:
    return "ante" if "poker" in game else "main"


@dataclass
class Device:
    sim: Any
    server: PtyServer
    driver: Any


class Rig:
    """One simulated table. ``devices`` names what is plugged in: ``shuffler``, ``framed``,
    ``scanner``, ``beetek`` (the shoes are all named "shoe" on the queue)."""

    def __init__(self, game: str, tmp_path: Path, devices: Sequence[str] = ("shuffler",),
                 layout_device: str | None = None, seed: int = SEED) -> None:
        self.game = game
        self.out: queue.Queue[ev.RoundEvent] = queue.Queue()
        self.pending: list[ev.RoundEvent] = []
        self.seen: list[ev.RoundEvent] = []
        self.devices: dict[str, Device] = {}
        self.wager_seq = 0
        self.journal = tmp_path / "journal"
        layout = TableLayout.for_game(game, layout_device)
        self.writer = JournalWriter(self.journal, table_id=layout.table_id,
                                    durability=Durability.MONEY)
        journaled, _report = recover(self.writer, layout)
        self.table = TableThread(journaled)
        self.table.subscribe(self.out.put)
        self.table.start()
        try:
            for kind in devices:
                self.devices[kind] = self._plug(kind, tmp_path, seed)
            for _ in devices:
                self.wait(ev.DeviceNoted, lambda e: e.detail == "DeviceOnline")
        except BaseException:
            self.close()
            raise

    def _plug(self, kind: str, tmp_path: Path, seed: int) -> Device:
        sims: dict[str, Callable[[], Any]] = {
            "shuffler": lambda: ShufflerSim(seed=seed), "framed": lambda: FramedShoeSim(seed=seed),
            "scanner": lambda: ScannerShoeSim(seed=seed), "beetek": lambda: BeeTekShoeSim(seed=seed)}
        sim = sims[kind]()
        server = PtyServer(sim, link=tmp_path / kind, name=kind)
        if kind in ("shuffler", "framed"):
            bind_server(sim, server)
        else:
            sim.bind_link(server)
        server.start()
        link = str(tmp_path / kind)
        if kind == "shuffler":
            # 0.5 s per attempt (4 attempts) instead of 0.25 s: a retry resends the same sequence
            # number, so a slow CI box only makes a command wait longer, never run twice
            driver = Shuffler(link, self.table.inputs, backoff=FAST,  # type: ignore[arg-type]
                              attempt_timeout=0.5)
        else:
            driver = open_shoe(kind, link, self.table.inputs, backoff=FAST)  # type: ignore[arg-type]
        driver.start()
        return Device(sim, server, driver)

    def close(self) -> None:
        for device in self.devices.values():
            device.driver.close()
            if hasattr(device.sim, "close"):
                device.sim.close()
            device.server.close()
        self.table.close()
        self.writer.close()

    def check_journal(self) -> None:
        """What the table did is what its journal says: the chain verifies and a replay of the
        recorded inputs gives the recorded outputs."""
        assert verify([self.journal]).ok
        assert replay_records(iter_records([self.journal])).divergences == []

    # devices ------------------------------------------------------------------------------
    @property
    def shuffler(self) -> Device:
        return self.devices["shuffler"]

    @property
    def shoe(self) -> Device:
        return next(d for k, d in self.devices.items() if k != "shuffler")

    def inject(self, spec: FaultSpec, device: str | None = None) -> None:
        (self.devices[device] if device else next(iter(self.devices.values()))).sim.inject(spec)

    # events -------------------------------------------------------------------------------
    def wait(self, kind: type, predicate: Callable[[Any], bool] = lambda e: True) -> Any:
        """The first not yet consumed event of ``kind``; earlier others are kept for later."""
        for index, event in enumerate(self.pending):
            if isinstance(event, kind) and predicate(event):
                return self.pending.pop(index)
        while True:
            try:
                event = self.out.get(timeout=WAIT)
            except queue.Empty:
                names = [type(e).__name__ for e in self.pending]
                pytest.fail(f"no {kind.__name__} within {WAIT} s (pending {names})")
            self.seen.append(event)
            if isinstance(event, kind) and predicate(event):
                return event
            self.pending.append(event)

    def note(self, detail: str) -> Any:
        return self.wait(ev.DeviceNoted, lambda e: e.detail.startswith(detail))

    def sync(self) -> None:
        """Wait until the table thread has handled everything queued so far (the service's
        liveness marker, :meth:`TableThread.probe`): its events are then on :attr:`out`."""
        assert self.table.probe(WAIT), f"the table thread did not pass a marker in {WAIT} s"

    @property
    def state(self) -> str:
        """The round's state as the table thread last published it (``round.status``)."""
        return self.table.snapshot.state

    def all(self, kind: type) -> list[Any]:
        """Every event of ``kind`` the table has published so far (after a sync)."""
        self.sync()
        while True:
            try:
                event = self.out.get_nowait()
            except queue.Empty:
                break
            self.seen.append(event)
            self.pending.append(event)
        return [e for e in self.seen if isinstance(e, kind)]

    # commands -----------------------------------------------------------------------------
    def put(self, command: cmd.Command) -> None:
        self.table.put(command)

    def bets(self, wagers: Sequence[tuple[str, str, int]] | None = None,
             close: bool = True) -> None:
        """Open a round, place ``wagers`` (box, bet, amount; default: the first bet on boxes 1
        and 2, LIVE: Win on P1 and P3, Lose on P2, Tie on P1) and say "No more bets"."""
        if wagers is None:
            if self.game == "live-three-pictures":
                wagers = [("p1", "win", 1000), ("p2", "lose", 1000), ("p3", "win", 1000),
                          ("p1", "tie", 1000)]
            else:
                wagers = [("1", first_bet(self.game), 1000), ("2", first_bet(self.game), 1000)]
        self.put(cmd.OpenRound(**DEALER))
        self.wait(ev.RoundOpened)
        for box, bet, amount in wagers:
            self.wager_seq += 1
            self.put(cmd.PlaceWager(**DEALER, wager_id=f"w{self.wager_seq}", position=box,
                                    bet=bet, amount=amount, player=f"player-{box}"))
            self.wait(ev.WagerAccepted, lambda e, n=self.wager_seq: e.wager.id == f"w{n}")
        if close:
            self.put(cmd.CloseBets(**DEALER))
            self.wait(ev.BetsClosed)

    def shuffle(self) -> None:
        if "shuffler" in self.devices and self.game != "live-three-pictures":
            self.shuffler.driver.end_round()  # SHUFFLE only from IDLE (docs/protocols.md 5.2)
            self.shuffler.driver.shuffle()
        else:
            self.put(cmd.ConfirmShuffle(**DEALER))
        self.wait(ev.ShuffleConfirmed)

    def hand(self) -> None:
        """The shuffler dispenses one set and the dealer lifts it."""
        self.shuffler.driver.dispense_hand()
        self.note("HandTaken")

    def draw(self, n: int = 1, **options: Any) -> list[Card | None]:
        """Draw ``n`` cards from the shoe and wait until the table has assigned each."""
        drawn = []
        for _ in range(n):
            drawn.append(self.shoe.sim.draw(**options))
            self.wait((ev.CardAssigned, ev.BurnCard))
        return drawn

    def finish(self, choice: cmd.Choice = cmd.Choice.PLAY) -> ev.RoundSettled:
        """Decisions (3CP: every Ante box plays), reveal, settle."""
        self.sync()
        for box in self.table.snapshot.decisions_due:
            self.put(cmd.PlayerDecision(**DEALER, position=box, choice=choice))
        if self.game != "live-three-pictures":
            self.put(cmd.RevealDealer(**DEALER))
        self.put(cmd.SettleRound(**DEALER))
        return self.wait(ev.RoundSettled)


def results(event: ev.RoundSettled | ev.RoundVoided | ev.SettlementCorrected
            ) -> dict[str, tuple[str, int]]:
    """wager id -> (outcome, net)."""
    return {r.wager_id: (r.outcome.value, r.net) for r in event.settlement.results}


def result_rules(event: Any) -> dict[str, str]:
    return {r.wager_id: r.rule for r in event.settlement.results}


def all_returned(event: ev.RoundVoided) -> bool:
    return all(r.outcome.value == "returned" and r.net == 0 for r in event.settlement.results)


@pytest.fixture(name="rig")
def fixture_rig(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Rig]:
    """``@pytest.mark.parametrize("rig", [(game, devices, layout_device)], indirect=True)``;
    a bare game name means a shuffler table."""
    param = request.param
    game, devices, layout = (param, ("shuffler",), None) if isinstance(param, str) else param
    rig = Rig(game, tmp_path, devices, layout)
    yield rig
    rig.close()
    rig.check_journal()


__all__ = [
    "DEALER",
    "FRAMED_DECK",
    "LINE_DECK",
    "MANUAL_GAMES",
    "SEED",
    "SHUFFLER_DECK",
    "SHUFFLER_GAMES",
    "SUPERVISOR",
    "Result",
    "Rig",
    "all_returned",
    "first_bet",
    "result_rules",
    "results",
    "shuffler_deck",
]
