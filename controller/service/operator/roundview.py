"""The round as the device operator sees it: a :class:`~.states.Stage` followed from the
table's typed round events only (never its state, which belongs to the table thread; never the
text of an event).

The view answers one question for the device side: does the round want a shuffle, a hand, the
end of the round, or nothing now? It also passes on the two orders it cannot decide itself:
a supervisor's ``clear-fault`` and the start of a new round.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from controller.journal.recorder import Phase
from controller.service.operator.states import Stage
from controller.table import events as ev
from controller.table.awaited import AwaitedOptions, Pause, pause_after

_STAGE_OF_PHASE = {Phase.NONE: Stage.NO_ROUND, Phase.BETTING: Stage.BETTING,
                   Phase.CLOSED: Stage.CLOSED, Phase.SHUFFLED: Stage.SHUFFLED,
                   Phase.DEALING: Stage.DEALING, Phase.DEALT: Stage.DEALT,
                   Phase.REVEALED: Stage.DEALT, Phase.SETTLED: Stage.NO_ROUND,
                   Phase.VOIDED: Stage.NO_ROUND, Phase.HOLD: Stage.HELD,
                   Phase.OPTIONS: Stage.HELD}


class Signal(str, Enum):
    """An order the view passes on to the device machine."""

    NEW_ROUND = "new_round"
    ROUND_ENDED = "round_ended"
    CLEAR_FAULT = "clear_fault"
    DECK_RELEASED = "deck_released"


class DeckUse(str, Enum):
    USABLE = "usable"
    BLOCKED = "blocked"
    """The table will not deal from this deck (a wrong count, a refused shuffle): no shuffle
    until it is replaced or counted (``DeckReleased``)."""


@dataclass(slots=True)
class OperatorView:
    round: int = 0
    stage: Stage = Stage.NO_ROUND
    resume_to: Stage = Stage.NO_ROUND
    """The stage a held round returns to when the table lets it go on."""
    shuffled_ahead: bool = False
    """A shuffle was confirmed before "No more bets" (or for the next round): the round goes
    straight to dealing. Not by round number: the table numbers rounds per journal session."""
    deck: DeckUse = DeckUse.USABLE
    last_clause: str = ""
    options: AwaitedOptions = field(default_factory=AwaitedOptions)
    """The players' options still awaited: the round is held until the last answer."""

    @classmethod
    def resumed(cls, number: int, phase: Phase, resumes_to: Phase,
                deck_blocked: bool = False,
                awaited: AwaitedOptions | None = None) -> OperatorView:
        """After a restart: the round recovery left open, where the journal says it stood."""
        view = cls()
        view.resume(number, phase, resumes_to, deck_blocked, awaited)
        return view

    def resume(self, number: int, phase: Phase, resumes_to: Phase,
               deck_blocked: bool = False, awaited: AwaitedOptions | None = None) -> None:
        """Start over from the round recovery left open (a restart, before any round event):
        in place, so the view stays the one part that writes its own fields."""
        self.round = number
        self.stage = _STAGE_OF_PHASE.get(phase, Stage.NO_ROUND)
        self.resume_to = _STAGE_OF_PHASE.get(resumes_to, Stage.NO_ROUND)
        self.shuffled_ahead = False
        self.deck = DeckUse.BLOCKED if deck_blocked else DeckUse.USABLE
        self.last_clause = ""
        self.options = awaited.copy() if awaited is not None else AwaitedOptions()

    @property
    def wants_shuffle(self) -> bool:
        return self.stage is Stage.CLOSED and self.deck is DeckUse.USABLE

    @property
    def wants_hand(self) -> bool:
        return self.stage in (Stage.SHUFFLED, Stage.DEALING)

    @property
    def over(self) -> bool:
        """No round is using the device's deck: the device should be ended (IDLE)."""
        return self.stage in (Stage.NO_ROUND, Stage.BETTING)

    def follow(self, event: ev.RoundEvent) -> Signal | None:
        """Update the view with one round event; the order it carries, if any."""
        if isinstance(event, ev.DeckBlocked):
            self.deck = DeckUse.BLOCKED
            return None
        if isinstance(event, ev.DeckReleased):
            self.deck = DeckUse.USABLE
            return Signal.DECK_RELEASED
        if isinstance(event, ev.DeviceFaultClearOrdered):
            self.last_clause = event.clause
            return Signal.CLEAR_FAULT
        if isinstance(event, ev.ShuffleConfirmed):
            if self.stage is Stage.CLOSED:
                self.stage = Stage.SHUFFLED
            else:
                self.shuffled_ahead = True
            return None
        if isinstance(event, ev.RoundOpened):
            self.round, self.stage = event.round, Stage.BETTING
            return Signal.NEW_ROUND
        if event.round != self.round:
            return None
        return self._in_round(event)

    def _in_round(self, event: ev.RoundEvent) -> Signal | None:
        if isinstance(event, ev.BetsClosed):
            self.stage = Stage.SHUFFLED if self.shuffled_ahead else Stage.CLOSED
            self.shuffled_ahead = False
        elif isinstance(event, ev.DeviceNoted):
            if event.cause is ev.NoteCause.SHUFFLE_REFUSED:
                self.deck = DeckUse.BLOCKED
            elif event.cause is ev.NoteCause.SHUFFLE_LOST and self.stage is Stage.SHUFFLED:
                self.stage, self.shuffled_ahead = Stage.CLOSED, False
        elif isinstance(event, (ev.CardAssigned, ev.BurnCard)):
            if self.stage is Stage.SHUFFLED:
                self.stage = Stage.DEALING
        elif (pause := pause_after(self.options, event)) is not None:
            # held until the ruling or the last awaited answer: a hand dealt while the
            # players choose is one the table only buffers, and the operator would go on
            # dealing the whole deck into that buffer
            if pause is Pause.HELD and self.stage is not Stage.HELD:
                self.resume_to, self.stage = self.stage, Stage.HELD
            elif pause is Pause.GOES_ON and self.stage is Stage.HELD:
                self.stage = self.resume_to
        elif isinstance(event, ev.DealComplete):
            self.stage = Stage.DEALT
        elif isinstance(event, (ev.RoundSettled, ev.RoundVoided)):
            self.stage = Stage.NO_ROUND
            self.options.clear()
            return Signal.ROUND_ENDED
        return None
