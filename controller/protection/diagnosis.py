"""Diagnosis, not blame (issue 25): what a finding points to, and one alert per episode.

Two things the monitors alone get wrong:

* The ledger's "stuck inside or missing" reads a card unseen for a run of decks. A machine
  whose order is biased (a riffle of few passes, a replayed deck, a card held at one place)
  keeps some cards out of the dealt places far more often than chance, and the ledger then
  blames a missing card and holds the deck though every card is there. :class:`Diagnosis`
  keeps the hold only where no order monitor has fired within the episode: with one that has,
  the finding names it and the bias, and holds nothing. A card that really is missing still
  holds the deck at its run, as before (MBS-R3P 5.9: the count decides).
* A faulty machine keeps firing the CUSUMs (each restarts after an alarm). :class:`Episodes`
  reports the first finding of a fault and passes over more of the same fault until
  ``limits.EPISODE_DECKS`` decks go by without one; findings of one deck that point to the same
  fault are one alert naming every monitor that fired. A finding that holds the deck is always
  reported.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from controller.protection import limits
from controller.protection.monitors import ORDER_FAULTS, Fault, Finding
from drivers.events import Evidence


class Diagnosis:
    """Remembers when each order monitor last fired, and re-reads a missing-card finding in
    that light."""

    def __init__(self, episode: int = limits.EPISODE_DECKS) -> None:
        self.episode = episode
        self.order_fired: dict[str, int] = {}

    def note(self, findings: Iterable[Finding], deck: int) -> None:
        for found in findings:
            if found.fault in ORDER_FAULTS:
                self.order_fired[found.monitor.value] = deck

    def explain(self, findings: list[Finding], deck: int) -> list[Finding]:
        """``findings`` of deck number ``deck``, a missing-card finding re-read as a bias when
        an order monitor fired within the episode."""
        self.note(findings, deck)
        recent = sorted(name for name, at in self.order_fired.items()
                        if deck - at <= self.episode)
        if not recent:
            return findings
        return [_biased(found, recent)
                if found.fault is Fault.MISSING and found.evidence is Evidence.STATISTICAL
                else found for found in findings]


def _biased(found: Finding, monitors: list[str]) -> Finding:
    unseen = found.detail.split(": a card stuck")[0]
    return replace(found, holds=False, fault=Fault.BIAS,
                   detail=f"{unseen}: kept out of the deals by a biased order "
                          f"({', '.join(monitors)} fired), not a missing card; deck not held")


class Episodes:
    """One alert per episode of a fault (the live table and the offline report)."""

    def __init__(self, episode: int = limits.EPISODE_DECKS) -> None:
        self.episode = episode
        self.last: dict[Fault, int] = {}

    def alerts(self, findings: list[Finding], deck: int) -> list[Finding]:
        out: list[Finding] = []
        merged: dict[Fault, int] = {}
        for found in findings:
            if found.holds:
                out.append(found)
                self.last[found.fault] = deck
                continue
            if found.fault in merged:
                i = merged[found.fault]
                out[i] = replace(out[i], detail=f"{out[i].detail} (also {found.monitor.value})")
                continue
            last = self.last.get(found.fault)
            self.last[found.fault] = deck
            if last is not None and deck - last <= self.episode:
                continue
            merged[found.fault] = len(out)
            out.append(replace(found, detail=f"{found.fault.value}: {found.detail}"))
        return out
