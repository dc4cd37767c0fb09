"""Fixtures for the journal tests: an injectable UTC clock, a key, and small journals built
in ``tmp_path`` (real files; no sleeps)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import structlog

from controller.games.cards import parse_cards
from controller.journal import Durability, JournalWriter
from controller.journal.recorder import JournaledTable
from controller.table import commands as cmd
from drivers import events as dev

START = datetime(2025, 6, 1, 20, 0, 0, tzinfo=timezone.utc)
KEY = bytes(range(32))


@pytest.fixture(autouse=True)
def restore_structlog() -> Iterator[None]:
    """The CLI configures structlog to print to the (captured) stderr; put the process-wide
    configuration back so no later test logs to a closed capture stream."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


class FakeClock:
    """A UTC clock the test moves by hand, and a monotonic clock that ticks 1 ms per read."""

    def __init__(self, start: datetime = START) -> None:
        self.now = start
        self.mono = 1_000_000_000

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)

    def monotonic_ns(self) -> int:
        self.mono += 1_000_000
        return self.mono


@pytest.fixture(name="clock")
def fixture_clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(name="key_file")
def fixture_key_file(tmp_path: Path) -> Path:
    """:data:`KEY` in a key file (hex, one line)."""
    path = tmp_path / "journal.key"
    path.write_text(KEY.hex() + "\n")
    return path


@pytest.fixture(name="journal_dir")
def fixture_journal_dir(tmp_path: Path) -> Path:
    return tmp_path / "journal"


@pytest.fixture(name="open_writer")
def fixture_open_writer(journal_dir: Path, clock: FakeClock
                        ) -> Iterator[Callable[..., JournalWriter]]:
    """Open writers on ``journal_dir`` with the fake clock; all are closed after the test."""
    opened: list[JournalWriter] = []

    def open_writer(**options: Any) -> JournalWriter:
        settings: dict[str, Any] = {"table_id": "T7", "clock": clock,
                                    "monotonic_ns": clock.monotonic_ns,
                                    "durability": Durability.NONE}
        directory = options.pop("directory", journal_dir)
        settings.update(options)
        writer = JournalWriter(directory, **settings)
        opened.append(writer)
        return writer

    yield open_writer
    for writer in opened:
        writer.close()


def deal_round(writer: JournalWriter, round_id: str, cards: tuple[str, ...] = ("QD", "7S", "AH")
               ) -> None:
    """A few round records shaped like the table's (bets, cards, settlement)."""
    writer.append("round_started", {"game": "rws-nc-three-pictures"}, round_id=round_id)
    writer.append("bets_closed", {"wagers": 3}, round_id=round_id, actor="dealer:42")
    for position, card in zip(("1", "2", "dealer"), cards):
        writer.append("card_assigned", {"position": position, "card": card}, round_id=round_id,
                      actor="shoe")
    writer.append("round_settled", {"net": {"1": 100, "2": -100}}, round_id=round_id)


THREE_HANDS = (("QD", "JD", "KD"), ("2C", "3C", "4C"), ("5H", "6H", "7H"))
"""Box 1, box 2 and the dealer of a three-card game dealt by a shuffler, a set each."""


def close_deal_and_settle(table: JournaledTable) -> None:
    """The rest of a round whose bets are placed: "No more bets", the shuffle, three sets from
    the shuffler (:data:`THREE_HANDS`), the reveal and the settlement, each a recorded input."""
    table.process(cmd.CloseBets(actor="dana", role=cmd.Role.DEALER))
    table.process(dev.ShuffleDone("shuffler", counted=52))
    for hand, cards in enumerate(THREE_HANDS, 1):
        table.process(dev.CardSetDispensed("shuffler", cards=parse_cards(cards),
                                           hand_number=hand))
    table.process(cmd.RevealDealer(actor="dana", role=cmd.Role.DEALER))
    table.process(cmd.SettleRound(actor="dana", role=cmd.Role.DEALER))


def read_lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def write_lines(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(lines))
