"""A noisy device line journals a count, not every error (issue 24, finding 7).

A Bee-Tek shoe at the wrong baud rate sends nothing but mangled bytes: on main every resync was
a ``LinkError`` input and a ``device_noted`` output, 18,406 records (8.8 MB) in 10 s. Here a real
firmware_sim Bee-Tek shoe on a real pty feeds the service's real wiring (as ``tablectl run``
builds it, :class:`Wiring`) wrong-baud noise, and the journal is read back: per window the
first ``flood_burst`` link errors are journaled in full and one ``flood_summary`` counts the
rest, and nothing the driver counted is lost from the record.

The limiter's own windows are checked on a stepped clock (a seam of :class:`Floodgate`, not a
mock): exact counts, first/last reason, one summary per ended window."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from typing import Any
from pathlib import Path

import pytest

from controller.journal.reader import iter_records
from controller.journal.record import Record
from controller.service.control.access import Peer
from controller.service.config import parse_config
from controller.service.wiring.floodgate import FLOOD_SUMMARY, Floodgate, FloodKind
from controller.service.wiring.handler import flood_source
from controller.service.policy import (
    DEFAULT_FLOOD_BURST,
    DEFAULT_FLOOD_WINDOW_SECONDS,
    FloodLimits,
)
from controller.service.protocol import Role
from controller.service.wiring.pipeline import Wiring
from firmware_sim.beetek import BeeTekShoeSim
from firmware_sim.serve import PtyServer
from tests.controller.service.conftest import ALLOW_CLOCK

NOISE_SECONDS = 60.0
"""Upper bound on how long the noise runs while the test waits for what it needs."""
WRONG_BAUD = b"<>[]:\r\n\x00\xff\xf0\x80\xe6\x9eGameCard4SE3"
"""What 9600-baud ASCII looks like read at another rate: framing characters at random among
high bytes (each chunk below is drawn from these)."""


def _toml(tmp: Path, link: Path, limits: str) -> str:
    return (f'[table]\nid = "NOISE-1"\ngame = "rws-nc-three-pictures"\n\n[device]\n'
            f'kind = "shoe"\ndialect = "beetek"\nurl = "{link}"\n\n[journal]\n'
            f'directory = "{tmp / "journal"}"\ndurability = "none"\n{limits}\n[control]\n'
            f'socket = "{tmp / "control.sock"}"\nsocket_group = ""\n' + ALLOW_CLOCK)


class NoisyShoe:
    """A simulated Bee-Tek shoe on a real pty, and the service wired to it."""

    def __init__(self, tmp: Path, limits: str) -> None:
        self.tmp = tmp
        self.sim = BeeTekShoeSim(seed=3)
        self.server = PtyServer(self.sim, name="shoe", link=tmp / "shoe")
        self.sim.bind_link(self.server)
        self.server.start()
        config = parse_config(_toml(tmp, tmp / "shoe", limits), source=str(tmp / "t.toml"))
        self.wiring = Wiring(config, lambda event: None)
        self.wiring.start()
        assert self.wiring.device is not None
        self.driver: Any = self.wiring.device.driver
        self.rng = random.Random(11)

    @property
    def link_errors(self) -> int:
        """Link errors the driver counted (each one a LinkError event to the table)."""
        return int(self.driver.link_errors)

    def noise(self) -> None:
        self.sim.output(bytes(self.rng.choice(WRONG_BAUD) for _ in range(64)))

    def noise_until(self, done: Callable[[], bool], what: str) -> None:
        end = time.monotonic() + NOISE_SECONDS
        while not done():
            if time.monotonic() > end:
                raise AssertionError(f"timed out waiting for {what}")
            for _ in range(20):
                self.noise()

    def close(self) -> list[Record]:
        """Stop the service (it journals the window still open) and read the journal."""
        self.wiring.close()
        self.server.close()
        return list(iter_records([self.tmp / "journal"]))


@pytest.fixture(name="shoe_at")
def fixture_shoe_at(tmp_path: Path) -> Iterator[Callable[[str], NoisyShoe]]:
    made: list[NoisyShoe] = []

    def make(limits: str) -> NoisyShoe:
        made.append(NoisyShoe(tmp_path, limits))
        return made[-1]

    yield make
    for shoe in made:
        shoe.wiring.close()
        shoe.server.close()


def _from_shoe(records: list[Record]) -> list[Record]:
    """What the noise put in the journal: link errors (input and the table's note), warnings
    and the summaries."""
    return [r for r in records if r.actor == "shoe" and (
        r.event_type == FLOOD_SUMMARY
        or r.event_type == "input_device" and r.payload["type"] in ("LinkError", "DeviceWarning"))
        or r.event_type == "device_noted" and r.payload["detail"].startswith(
            ("LinkError", "DeviceWarning"))]


def _summaries(records: list[Record], kind: FloodKind) -> list[Record]:
    return [r for r in records if r.event_type == FLOOD_SUMMARY
            and r.payload["kind"] == kind.value]


ShoeAt = Callable[[str], NoisyShoe]


def test_a_wrong_baud_bee_tek_line_journals_under_200_records_a_minute(shoe_at: ShoeAt) -> None:
    """With the default limits, a Bee-Tek line at the wrong baud rate for as long as it takes
    the driver to count 2,000 link errors (seconds, all inside one minute) journals at most
    the burst in full and one summary: under 200 records for that minute, where main wrote two
    records per error. The summary holds the count of the rest, and the dropped bytes."""
    shoe = shoe_at("")
    shoe.noise_until(lambda: shoe.link_errors >= 2000, "2000 link errors")
    records = shoe.close()
    counted = shoe.link_errors  # after the driver stopped: the last noise it read counts too
    errors = [r for r in records if r.event_type == "input_device"
              and r.payload["type"] == "LinkError"]
    (summary,) = _summaries(records, FloodKind.LINK_ERROR)
    noisy = _from_shoe(records)
    first = min(r.mono_ns for r in noisy)
    in_the_minute = [r for r in noisy if r.mono_ns - first < 60 * 10**9]
    assert len(in_the_minute) < 200, len(in_the_minute)
    assert len(errors) == DEFAULT_FLOOD_BURST
    payload = summary.payload
    assert payload["journaled"] == DEFAULT_FLOOD_BURST
    assert payload["suppressed"] + len(errors) == counted  # counted, none lost uncounted
    assert payload["suppressed"] >= 2000 - DEFAULT_FLOOD_BURST
    assert payload["dropped_bytes"] > 0
    assert payload["source"] == "shoe" and payload["first_reason"] and payload["last_reason"]
    assert payload["window_seconds"] == DEFAULT_FLOOD_WINDOW_SECONDS
    assert payload["opened_at"] <= payload["first_at"] <= payload["last_at"]


def test_each_window_of_a_noisy_line_gets_its_own_summary(shoe_at: ShoeAt) -> None:
    """``flood_window_s = 1``, ``flood_burst = 5``: over three windows each journals five link
    errors in full and one summary of its own (when it began, its first and last suppressed
    error), and the summaries with the errors journaled add up to what the driver counted."""
    shoe = shoe_at("flood_burst = 5\nflood_window_s = 1\n")
    journal = shoe.tmp / "journal"

    def three_summaries() -> bool:
        return len(list(iter_records([journal], strict=False, only={FLOOD_SUMMARY}))) >= 3

    shoe.noise_until(three_summaries, "three windows summarised")
    records = shoe.close()
    counted = shoe.link_errors
    errors = [r for r in records if r.event_type == "input_device"
              and r.payload["type"] == "LinkError"]
    summaries = _summaries(records, FloodKind.LINK_ERROR)
    assert len(summaries) >= 3
    assert all(s.payload["journaled"] == 5 and s.payload["suppressed"] > 0 for s in summaries)
    assert len(errors) <= 5 * (len(summaries) + 1)  # a last window may end with none suppressed
    assert sum(s.payload["suppressed"] for s in summaries) + len(errors) == counted
    opened = [s.payload["opened_at"] for s in summaries]
    assert opened == sorted(opened) and len(set(opened)) == len(opened)


class Clock:
    """A clock the test steps (the limiter's seam); wall time follows it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_limiter_journals_the_burst_then_counts_until_the_window_ends() -> None:
    """Three of a source in full, then counted with the first and last reason; another source
    has its own window; the summary is due only when the window ends, once."""
    clock = Clock()
    gate = Floodgate(FloodLimits(burst=3, window_seconds=10), clock=clock, wall=clock)
    kind = FloodKind.COMMAND_REFUSED
    for _ in range(3):
        assert not gate.throttled(kind, "uid 1001")
        gate.counted(kind, "uid 1001")
    assert gate.throttled(kind, "uid 1001")
    assert not gate.throttled(kind, "uid 1002")
    gate.suppressed(kind, "uid 1001", "CloseBets")
    clock.now += 4
    gate.suppressed(kind, "uid 1001", "OpenRound")
    assert gate.due() == [] and gate.next_due() == pytest.approx(6)
    clock.now += 6
    assert gate.next_due() == 0
    (summary,) = gate.due()
    assert (summary.source, summary.journaled, summary.suppressed) == ("uid 1001", 3, 2)
    assert (summary.first_reason, summary.last_reason) == ("CloseBets", "OpenRound")
    assert summary.first_at < summary.last_at
    assert gate.due() == [] and gate.next_due() is None
    assert not gate.throttled(kind, "uid 1001")  # a new window: in full again


def test_a_window_that_never_overflowed_ends_silently_and_pending_ones_drain() -> None:
    """Nothing suppressed: no summary (everything is in the journal already). At shutdown
    the open window's count is journaled at once, not lost."""
    clock = Clock()
    gate = Floodgate(FloodLimits(burst=2, window_seconds=10), clock=clock, wall=clock)
    gate.counted(FloodKind.LINK_ERROR, "shoe")
    clock.now += 11
    assert gate.due() == []
    gate.counted(FloodKind.LINK_ERROR, "shoe")
    gate.counted(FloodKind.LINK_ERROR, "shoe")
    gate.suppressed(FloodKind.LINK_ERROR, "shoe", "bad CRC", dropped=12)
    (summary,) = gate.drain()
    assert (summary.suppressed, summary.dropped_bytes) == (1, 12)
    assert gate.drain() == []


def test_the_default_limits_keep_a_source_under_200_records_a_minute() -> None:
    """A refused wager is at most three records (input, wager_refused, command_refused), a
    link error two: with the defaults one source writes at most 3 x burst + 1 summary per
    window, scaled to a minute."""
    per_window = 3 * DEFAULT_FLOOD_BURST + 1
    assert per_window * 60 / DEFAULT_FLOOD_WINDOW_SECONDS < 200


def test_the_person_a_delegate_names_is_a_source_of_their_own() -> None:
    """The web process is one account for every screen: the person it acts for (``acting_for``,
    docs/service.md "Delegation") counts apart, so one dealer flooding from a screen does not
    silence the others; an account's own requests count as the account."""
    own = Peer(1, 4242, 4242, Role.DEALER)
    dana = Peer(1, 4242, 4242, Role.DEALER, acting_for="dana")
    sam = Peer(1, 4242, 4242, Role.SUPERVISOR, acting_for="sam")
    assert flood_source(own).startswith("uid 4242")
    assert flood_source(dana) == f"dana via {flood_source(own)}"
    assert len({flood_source(own), flood_source(dana), flood_source(sam)}) == 3


def test_a_summary_the_journal_could_not_take_is_due_again_later_not_at_once() -> None:
    """A full disk: the summary is kept, and due again after the retry delay (a quiet table
    thread waits for it instead of spinning), then handed out once."""
    clock = Clock()
    gate = Floodgate(FloodLimits(burst=1, window_seconds=10), clock=clock, wall=clock)
    gate.counted(FloodKind.LINK_ERROR, "shoe")
    gate.suppressed(FloodKind.LINK_ERROR, "shoe", "bad CRC")
    clock.now += 10
    summaries = gate.due()
    gate.requeue(summaries, retry_seconds=5)
    assert gate.next_due() == pytest.approx(5) and gate.due() == []
    clock.now += 5
    assert gate.next_due() == 0 and gate.due() == summaries and gate.due() == []
