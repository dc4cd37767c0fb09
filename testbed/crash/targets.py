"""Where the crash rig kills: a seeded target per controller life, aimed at the dealing phases.

Killing at random times landed only 5 of 21 kills mid-round in CI (issue 5, "mid-round crash
coverage"): a round spends most of its wall time in betting and in the controller's start-up,
and the clauses under test (RWS-NC3P 5.4.1/5.4.2, MBS-R3P 5.13.1/5.13.2, the supervisor hold
of the other games) only apply once "No more bets" has been called. So the controller child
prints one line per round event it publishes (``EVENT CardAssigned``, after the journal holds
the event), the parent reads those lines on a thread, and most lives are killed right after the
k-th occurrence of an event type of the deal, plus a seeded jitter of 0-30 ms (the experiment,
not a synchronisation). A share of lives keeps the old random time, so that start-up, recovery
and betting are still hit too.

:class:`ChildOutput` drains the child's stdout and stderr for the child's whole life: a pipe
nobody reads fills up and stalls the child's table thread on its next event line.
"""

from __future__ import annotations

import os
import queue
import random
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import IO

EVENT_PREFIX = "EVENT "
"""The child's stdout line for one round event: ``EVENT <type name>``."""

JITTER_SECONDS = (0.0, 0.03)

THREE_CARD_POKER = "rws-three-card-poker"


@dataclass(frozen=True, slots=True)
class Aim:
    """An event type to aim at: how often it occurs per round (to spread the k-th occurrence
    over a life of several rounds) and its weight among the aims."""

    event: str
    per_round: int
    weight: int


AIMS: tuple[Aim, ...] = (
    Aim("BetsClosed", 1, 2),          # "No more bets": the shuffle is about to start
    Aim("ShuffleConfirmed", 1, 2),    # shuffled, nothing dealt yet
    Aim("CardAssigned", 9, 3),        # a card in a hand: the deal in progress
    Aim("HandComplete", 3, 2),        # between two sets of the shuffler
    Aim("DealComplete", 1, 1),        # dealt; RWS-3CP: the decisions are due (3.8)
    Aim("DealerRevealed", 1, 1),      # revealed, settlement next (often lands after it)
)
DECISION_AIM = Aim("DecisionMade", 2, 2)
"""RWS-3CP 3.8: a box played or folded; the others may still be deciding."""


def aims_for(game: str) -> tuple[Aim, ...]:
    """The event types a game's round emits (only RWS-3CP has decisions)."""
    return (*AIMS, DECISION_AIM) if game == THREE_CARD_POKER else AIMS


class How(str, Enum):
    AIMED = "aimed"
    """Killed after the target event (and the jitter)."""
    TIMED = "timed"
    """Killed at a random time (the old way)."""
    FALLBACK = "fallback"
    """The target event did not come within the deadline: killed then."""
    FINISHED = "finished"
    """The controller finished its rounds before the target: not killed."""


@dataclass(frozen=True, slots=True)
class KillTarget:
    """One life's kill: after the ``occurrence``-th ``event`` plus ``jitter`` seconds, or, with
    no ``event``, ``delay`` seconds after the start. An aimed target that does not come within
    ``delay`` seconds is killed then (a hold or a slow recovery must not stall the campaign)."""

    event: str | None
    occurrence: int
    jitter: float
    delay: float

    def describe(self) -> str:
        if self.event is None:
            return f"at {self.delay:.2f} s"
        return f"{self.jitter * 1000:.0f} ms after {self.event} #{self.occurrence}"


def plan_targets(rng: random.Random, game: str, kills: int, rounds: int, *,
                 timed_share: float = 0.2, min_delay: float = 0.9, max_delay: float = 3.0,
                 deadline: float = 30.0) -> list[KillTarget]:
    """Seeded targets for ``kills`` lives: ``timed_share`` of them (rounded, chosen at random)
    at a random time in [min_delay, max_delay], the others aimed. The k-th occurrence is drawn
    so that a life lasts up to about ``rounds / (kills + 1)`` rounds: the kills spread over
    the campaign instead of all falling in its first rounds."""
    timed = set(rng.sample(range(kills), round(kills * timed_share)))
    rounds_per_life = max(1, rounds // (kills + 1))
    aims = aims_for(game)
    targets: list[KillTarget] = []
    for life in range(kills):
        if life in timed:
            targets.append(KillTarget(None, 0, 0.0, rng.uniform(min_delay, max_delay)))
            continue
        aim = rng.choices(aims, weights=[a.weight for a in aims])[0]
        occurrence = rng.randint(1, aim.per_round * rounds_per_life)
        targets.append(KillTarget(aim.event, occurrence, rng.uniform(*JITTER_SECONDS),
                                  deadline))
    return targets


class ChildOutput:
    """Drains a controller child's stdout (event lines, onto :attr:`events`; ``None`` at the
    end) and stderr (the last 64 KiB kept for a failure message) on two threads, from start to
    exit, so the child never blocks on a full pipe whatever the parent is doing."""

    STDERR_KEEP = 64 * 1024

    def __init__(self, process: subprocess.Popen[bytes], name: str) -> None:
        assert process.stdout is not None and process.stderr is not None
        self.events: queue.Queue[str | None] = queue.Queue()
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._read_stdout, args=(process.stdout,),
                             name=f"{name}-stdout", daemon=True),
            threading.Thread(target=self._read_stderr, args=(process.stderr,),
                             name=f"{name}-stderr", daemon=True)]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self, stream: IO[bytes]) -> None:
        try:
            for raw in iter(stream.readline, b""):
                line = raw.decode(errors="replace").rstrip("\n")
                if line.startswith(EVENT_PREFIX):
                    self.events.put(line[len(EVENT_PREFIX):])
        finally:
            self.events.put(None)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for chunk in iter(lambda: stream.read1(4096), b""):  # type: ignore[attr-defined]
            with self._lock:
                self._stderr.append(chunk)
                self._stderr_size += len(chunk)
                while self._stderr_size > self.STDERR_KEEP and len(self._stderr) > 1:
                    self._stderr_size -= len(self._stderr.popleft())

    def stderr_text(self) -> str:
        with self._lock:
            return b"".join(self._stderr).decode(errors="replace")

    def close(self, timeout: float = 5.0) -> None:
        """After the child has exited: the pipes reach EOF, the threads end and are joined."""
        for thread in self._threads:
            thread.join(timeout)
            if thread.is_alive():
                raise AssertionError(f"{thread.name} did not end after the child exited")


@dataclass(frozen=True, slots=True)
class Strike:
    how: How
    after: float
    """Seconds from the start of the life to the kill (or to the exit)."""


def strike(process: subprocess.Popen[bytes], output: ChildOutput, target: KillTarget
           ) -> Strike:
    """Wait for ``target`` and SIGKILL the child, or see it finish first; returns how."""
    started = time.monotonic()
    if target.event is None:
        try:
            process.wait(timeout=target.delay)  # a random moment; it may have finished already
        except subprocess.TimeoutExpired:
            return _kill(process, How.TIMED, started)
        return Strike(How.FINISHED, time.monotonic() - started)
    seen = 0
    deadline = started + target.delay
    while True:
        try:
            event = output.events.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return _kill(process, How.FALLBACK, started)
        if event is None:  # stdout closed: the child is exiting
            process.wait()
            return Strike(How.FINISHED, time.monotonic() - started)
        if event == target.event:
            seen += 1
            if seen >= target.occurrence:
                time.sleep(target.jitter)  # the experiment's jitter, not a synchronisation
                return _kill(process, How.AIMED, started)


def _kill(process: subprocess.Popen[bytes], how: How, started: float) -> Strike:
    after = time.monotonic() - started
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.wait()
    if process.returncode != -signal.SIGKILL:
        return Strike(How.FINISHED, after)  # it exited on its own just before
    return Strike(how, after)


def count(strikes: Sequence[Strike], how: How) -> int:
    return sum(1 for s in strikes if s.how is how)
