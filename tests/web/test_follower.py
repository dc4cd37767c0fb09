"""The follower behind the dealer's screen reads the table's status for a supervisor (so
``waits``, cut to the reader's role, still offers the screen's every button), else for a dealer,
else in the web process's own role: the screen follows the table either way. A real table (the service's wiring, a simulated shuffler on a pty) behind
a real control socket whose policy makes this process the web group only."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.service.control.server import AccessPolicy, ControlServer
from controller.roles import Role
from controller.web.live import Broadcast, TableFollower
from tests.controller.service.operator_rig import Rig

WAIT_SECONDS = 15.0


@pytest.fixture(name="rig")
def rig_fixture(tmp_path: Path) -> Iterator[Rig]:
    rig = Rig(tmp_path, "rws-three-card-poker").start()
    try:
        yield rig
    finally:
        rig.close()


def _view_when(broadcast: Broadcast, shows: Callable[[dict[str, Any]], bool]
               ) -> dict[str, Any]:
    """The published view once ``shows`` it (bounded: the follower acts on each event)."""
    deadline = time.monotonic() + WAIT_SECONDS
    pause = threading.Event()
    while not shows(broadcast.latest) and time.monotonic() < deadline:
        pause.wait(0.05)
    return broadcast.latest


def _open_offered(view: dict[str, Any]) -> bool:
    return [b["verb"] for b in view["actions"]] == ["round.open"]


@pytest.mark.parametrize(("roles", "dealer_buttons"), [
    (frozenset({Role.DEALER, Role.SUPERVISOR}), True),
    (frozenset({Role.DEALER}), True),
    (frozenset(), False),
])
def test_the_screen_follows_the_table_whatever_roles_the_web_group_has(
        tmp_path: Path, rig: Rig, roles: frozenset[Role], dealer_buttons: bool) -> None:
    """With ``control.web_roles`` holding supervisor the follower reads as one; with operator
    only, the socket refuses that and it reads as a dealer (the dealer's buttons stay); with
    neither, in its own (surveillance) role: the screen still follows the table instead of
    showing "not reachable"."""
    assert rig.wiring is not None and rig.wiring.handler is not None
    policy = AccessPolicy("ops", "surv", supervisors_group="sups",
                          groups_of=lambda uid, gid: frozenset({"web", "surv"}),
                          superusers=frozenset(), web_group="web", web_roles=roles)
    with ControlServer(tmp_path / "c.sock", rig.wiring.handler, policy) as server:
        broadcast = Broadcast()
        follower = TableFollower(server.path, broadcast)
        follower.start()
        try:
            view = _view_when(broadcast, lambda v: v["online"] and (
                _open_offered(v) or not dealer_buttons))
        finally:
            follower.stop()
    assert view["online"] and view["state"] == "idle", view
    assert _open_offered(view) or not dealer_buttons, view["actions"]
