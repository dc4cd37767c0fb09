"""The layout each round's own wager records account for, checked against "No more bets".

Replay regenerates outputs with today's rules, so a fault the rules themselves make (and
regenerate identically) cannot be caught by comparison alone. This check reads only the
journal's recorded outputs: every wager that ``bets_closed`` lists must have been put on the
layout by a ``wager_accepted`` or ``wagers_accepted`` record of that round, at the amount its
``wager_reduced`` records left it, and not taken off by ``wager_withdrawn``; and every wager so
placed must be listed. A wager in action that no acceptance placed (issue 33, finding 1: a batch
recorded ``command_refused`` whose rows reached ``bets_closed``) is evidence the journal does
not support, so replay fails on it, whichever code wrote the journal.

Pure: fed record types and payloads, it keeps one small dict for the round in betting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ROUND_OPENED = "round_opened"
BETS_CLOSED = "bets_closed"
_PLACING = frozenset({"wager_accepted", "wagers_accepted", "wager_withdrawn", "wager_reduced"})


@dataclass(slots=True)
class WagerBook:
    """What the recorded wager records of the round in betting put on the layout."""

    round: int | None = None
    """The journal round whose betting this book follows (``None``: none seen opening; a
    journal excerpt that starts mid-round checks nothing for that round)."""
    amounts: dict[str, int] = field(default_factory=dict)
    placed: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    """Each wager on the layout as its acceptance recorded it (id, position, bet, player,
    seated; the amount is :attr:`amounts`'), for a replay that goes on from the recorded layout
    (:meth:`layout`)."""

    def see(self, event_type: str, payload: Mapping[str, Any]) -> str | None:
        """Take one recorded output; a description of what ``bets_closed`` holds that the
        round's wager records do not account for (or lacks), else ``None``."""
        if event_type == ROUND_OPENED:
            self.round, self.amounts, self.placed = payload.get("round"), {}, {}
            return None
        if self.round is None or payload.get("round") != self.round:
            return None
        if event_type in _PLACING:
            self._placing(event_type, payload)
            return None
        if event_type == BETS_CLOSED:
            self.round = None  # placing ends with "No more bets"
            return self._compare(payload.get("wagers") or ())
        return None

    def _placing(self, event_type: str, payload: Mapping[str, Any]) -> None:
        if event_type == "wager_accepted":
            wagers = [payload.get("wager") or {}]
        elif event_type == "wagers_accepted":
            wagers = list(payload.get("wagers") or ())
        else:
            wager_id = str(payload.get("wager_id"))
            kept = payload.get("amount", 0) if event_type == "wager_reduced" else 0
            if kept:
                self.amounts[wager_id] = kept
            else:
                self.amounts.pop(wager_id, None)
                self.placed.pop(wager_id, None)
            return
        self.vouch(wagers)

    def vouch(self, wagers: Any) -> None:
        """Put ``wagers`` (payload dicts) on the layout as placed: by their acceptance records,
        or by a listed old ruling that left them there with none of their own
        (:mod:`controller.journal.rule_changes`)."""
        for wager in wagers:
            if isinstance(wager, Mapping):
                self.amounts[str(wager.get("id"))] = wager.get("amount")  # type: ignore[assignment]
                self.placed[str(wager.get("id"))] = wager

    def layout(self) -> list[dict[str, Any]]:
        """The wagers the round's records put on the layout, at the amounts they left."""
        return [{**self.placed[i], "amount": amount} for i, amount in self.amounts.items()
                if i in self.placed]

    def _compare(self, closed: Any) -> str | None:
        listed = {str(w.get("id")): w.get("amount") for w in closed if isinstance(w, Mapping)}
        unplaced = sorted(i for i in listed if i not in self.amounts)
        if unplaced:
            return (f"bets_closed holds wager(s) {', '.join(unplaced[:5])}"
                    f"{' ...' if len(unplaced) > 5 else ''} that no wager_accepted or "
                    f"wagers_accepted record of the round placed")
        missing = sorted(i for i in self.amounts if i not in listed)
        if missing:
            return (f"bets_closed lacks wager(s) {', '.join(missing[:5])}"
                    f"{' ...' if len(missing) > 5 else ''} that the round's records placed "
                    f"and never withdrew")
        changed = sorted(i for i, amount in listed.items() if self.amounts[i] != amount)
        if changed:
            first = changed[0]
            return (f"bets_closed holds wager {first} at {listed[first]}, but the round's "
                    f"records left it at {self.amounts[first]}")
        return None
