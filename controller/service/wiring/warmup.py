"""The monitors' evidence across a restart: the last decks of the journal fed through a fresh
guard, off the service's READY path.

Without it a restart would start every sequential test afresh (a stuck card would need its 26
decks again, the repeat window would be empty). The journal's own reader
(:func:`controller.journal.reader.iter_newest_first`) reads the card inputs from the newest
file backwards, only as far as the last :data:`WARM_DECKS` shuffles: some tens of thousands of
records, not the journal's months (the start-up check has already verified the bytes). Findings
the warm-up reaches again are not reported again: they are in the journal already.

Feeding 2,000 decks through the monitors takes longer than the service may take to be READY
(docs/game-protection.md, "Restart"), so the service does not wait for it: a
:class:`WarmingGuard` is the table's guard from the start, warms itself on its own thread, and
holds the table's new card inputs until the history is fed, so the monitors see every deck in
the order it was dealt. The table itself never waits for protection; a finding on an input
held meanwhile reaches the table as a late input (``report``) when the warm-up ends.

It is the service's, not game protection's: it reads the journal, and the journal sits above
game protection (its recorder holds the guard). Here, in the wiring that already reads the
journal and installs the guard, the import runs downward only (issue 27).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import structlog

from controller.journal.codec import decode_input
from controller.journal.errors import JournalError
from controller.journal.reader import iter_newest_first
from controller.protection.guard import Guard, TableGuard
from controller.protection.limits import REPEAT_WINDOW
from controller.table import commands as cmd
from drivers import events as dev

log = structlog.get_logger(__name__)

WARM_DECKS = REPEAT_WINDOW
"""The repeat monitor's whole window (2,000 decks, about two days of one table), which also
covers the CUSUMs, the stuck-card run (26 decks) and the position (520) and category (400)
batches in progress: a restart loses no evidence. The batches after a restart are counted from
the first deck fed here, so a batch may share decks with one decided before."""
INPUT_EVENTS = ("input_device", "input_command")
SHUFFLES = (dev.ShuffleDone, cmd.ConfirmShuffle)
CARD_INPUTS = (*SHUFFLES, dev.CardSetDispensed, dev.CardRead)
"""The inputs the monitors act on (:class:`~controller.protection.guard.TableGuard`)."""
STOP_SECONDS = 30.0
"""How long :meth:`WarmingGuard.close` waits for the warm-up thread (it checks between
records, so it stops at once but on a machine too loaded to schedule it)."""


def read_history(directory: str | Path, decks: int = WARM_DECKS, *,
                 up_to_seq: int | None = None,
                 stop: threading.Event | None = None) -> list[object]:
    """The card inputs of the last ``decks`` decks of the journal in ``directory`` (up to
    record ``up_to_seq``), oldest first: from the ``decks``-th last shuffle on, or all of
    them when there are fewer shuffles."""
    newest_first: list[object] = []
    shuffles = 0
    for record in iter_newest_first(directory, only=INPUT_EVENTS,
                                    mentioning=[kind.__name__ for kind in CARD_INPUTS],
                                    up_to_seq=up_to_seq):
        if stop is not None and stop.is_set():
            break
        try:
            item = decode_input(record.event_type, record.payload)
        except JournalError:
            continue  # a record of a newer version's input: not evidence the monitors read
        if not isinstance(item, CARD_INPUTS):
            continue  # the type's name in another field
        newest_first.append(item)
        if isinstance(item, SHUFFLES):
            shuffles += 1
            if shuffles >= decks:
                break
    newest_first.reverse()
    return newest_first


def feed_history(guard: TableGuard, history: list[object],
                 stop: threading.Event | None = None) -> int:
    """Feed ``history`` to ``guard``'s monitors (past a :class:`WarmingGuard`'s holding)
    without reporting what they find (the journal holds it); the number of shuffles fed."""
    fed = 0
    for item in history:
        if stop is not None and stop.is_set():
            break
        TableGuard.before(guard, item)
        TableGuard.after(guard, item)
        fed += isinstance(item, SHUFFLES)
    guard.reports = 0
    return fed


def warm_from_journal(guard: TableGuard, directory: str | Path,
                      decks: int = WARM_DECKS) -> int:
    """Feed the last ``decks`` decks of the journal in ``directory`` to ``guard`` now, on the
    calling thread; the number of shuffles fed."""
    return feed_history(guard, read_history(directory, decks))


Report = Callable[[dev.ProtectionReport], None]


class WarmingGuard(TableGuard):
    """A :class:`TableGuard` that warms itself from the journal on its own thread.

    ``WarmingGuard(guard, directory, up_to_seq, report)``; :meth:`start`; :meth:`close`.
    Until the history is fed, :meth:`before` and :meth:`after` hold the table's inputs and
    answer nothing; then the warm-up thread feeds the held inputs in order and hands their
    findings to ``report`` (the table's input queue), and only then do the table's calls reach
    the monitors directly. ``up_to_seq`` is the journal's last record when the guard is
    installed: what is appended after it comes through the table, not the journal."""

    def __init__(self, guard: Guard, directory: str | Path, up_to_seq: int, report: Report,
                 decks: int = WARM_DECKS) -> None:
        super().__init__(guard)
        self.directory = Path(directory)
        self.up_to_seq = up_to_seq
        self.report = report
        self.decks = decks
        self.warmed = threading.Event()
        """Set once the history and the inputs held meanwhile are fed (or the warm-up gave
        up): from then on the table's inputs reach the monitors directly."""
        self.decks_fed = 0
        self.late_reports = 0
        """Findings on inputs held during the warm-up, handed to ``report``."""
        self._lock = threading.Lock()
        self._held: list[object] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._warm, name="protection-warmup",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        """Stop the warm-up (if it still runs) and wait for its thread."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(STOP_SECONDS)

    def before(self, item: object) -> list[dev.ProtectionReport]:
        with self._lock:
            if not self.warmed.is_set():
                self._held.append(item)
                return []
        return super().before(item)

    def after(self, item: object) -> list[dev.ProtectionReport]:
        with self._lock:
            if not self.warmed.is_set():
                return []  # held by :meth:`before`, fed whole (before and after) later
        return super().after(item)

    def _warm(self) -> None:
        try:
            self._feed_history()
            self._feed_held()
        except Exception:  # a bug must not hold the monitors' inputs for ever
            log.exception("protection warm-up failed: the monitors go on from what they saw")
        finally:
            with self._lock:
                self._held = []
                self.warmed.set()

    def _feed_history(self) -> None:
        started = time.monotonic()
        try:
            history = read_history(self.directory, self.decks, up_to_seq=self.up_to_seq,
                                   stop=self._stop)
            self.decks_fed = feed_history(self, history, self._stop)
        except JournalError as error:  # e.g. a file retention removed meanwhile
            log.warning("protection warm-up stopped: the monitors start with less evidence",
                        error=str(error))
        log.info("protection monitors warmed from the journal", decks=self.decks_fed,
                 seconds=round(time.monotonic() - started, 3))

    def _feed_held(self) -> None:
        """The inputs the table had meanwhile, in order, until none is left (then, under the
        same lock, the table's next input goes to the monitors directly)."""
        while not self._stop.is_set():
            with self._lock:
                held, self._held = self._held, []
                if not held:
                    self.warmed.set()
                    return
            for item in held:  # outside the lock: the table goes on holding meanwhile
                for found in (*TableGuard.before(self, item), *TableGuard.after(self, item)):
                    self.late_reports += 1
                    self.report(found)
