"""Root names who gives a command (issue 44): ``--actor dealer:1042`` from root's shell is
judged and journaled as that dealer, not as a Pit Supervisor under the dealer's name."""

from __future__ import annotations

import pytest

from controller.journal import iter_records
from controller.service.config import ServiceConfig
from controller.service.control.server import Peer
from controller.service.protocol import Refusal, Request, Role
from tests.controller.service.conftest import InProcessService

ROOT = Peer(12, 0, 0, Role.ROOT)


def _actors(config: ServiceConfig) -> list[str | None]:
    return [r.actor for r in iter_records([config.journal.directory])
            if r.event_type == "input_command"]


def test_root_naming_a_dealer_acts_as_that_dealer(service_config: ServiceConfig) -> None:
    with InProcessService(service_config) as running:
        handler = running.service.wiring.handler
        handler(Request(1, "round.open", {}, actor="dealer:1042"), ROOT)
        with pytest.raises(Refusal):  # a dealer may not void: the table refuses it by clause
            handler(Request(2, "supervisor.void", {"reason": "r"}, actor="dealer:1042"), ROOT)
        assert running.ask("round.status")["state"] == "betting"
        # naming nobody (or a supervisor), root acts as a Pit Supervisor
        handler(Request(3, "supervisor.void", {"reason": "r"}, actor="supervisor:7"), ROOT)
        assert running.ask("round.status")["state"] == "voided"
    opened, refused, voided = _actors(service_config)[-3:]
    assert opened is not None and opened.startswith("dealer:dealer:1042 (uid 0")
    assert refused is not None and refused.startswith("dealer:dealer:1042")
    assert voided is not None and voided.startswith("supervisor:supervisor:7")
