"""What the service's health probe answers (:class:`Health`): its own module so that the
lifecycle (:mod:`controller.service.lifecycle.app`) and the wired table (:mod:`.pipeline`) both use
it without importing each other (``app`` imports ``wiring`` when it wires the table; ``wiring``
importing ``app`` for this class made the two a cycle)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Health:
    alive: bool
    status: str
    """One line for ``systemctl status``, e.g. "round 1234 dealing, shuffler online"."""
