"""Delegation on the control socket: a member of ``control.web_group`` (the web process) names
the person at its screen in ``acting_for``; the socket judges and journals the request as that
person in that role, never beyond ``control.web_roles``, and refuses ``acting_for`` from anyone
else. Real Unix sockets and real SO_PEERCRED; only the group lookup is injected (tests cannot
create system groups), as in test_control.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.service.config import parse_config
from controller.service.control.server import (
    AccessPolicy,
    RequestRefused,
    ControlClient,
    ControlServer,
)
from controller.service.errors import ConfigError
from controller.service.protocol import ErrorCode, Role
from tests.controller.service.test_control import OPERATORS, SURVEILLANCE, Groups, Recorder

WEB = "tablectl-web"
SUPERVISORS = "tablectl-supervisors"


@pytest.fixture(name="groups")
def fixture_groups() -> Groups:
    return Groups()


@pytest.fixture(name="handler")
def fixture_handler() -> Recorder:
    return Recorder()


@pytest.fixture(name="server")
def fixture_server(tmp_path: Path, groups: Groups, handler: Recorder) -> Iterator[ControlServer]:
    policy = AccessPolicy(OPERATORS, SURVEILLANCE, groups_of=groups, superusers=frozenset(),
                          supervisors_group=SUPERVISORS, web_group=WEB,
                          web_roles=frozenset({Role.DEALER, Role.SUPERVISOR}))
    with ControlServer(tmp_path / "control.sock", handler, policy) as server:
        yield server


def _client(server: ControlServer, groups: Groups, *names: str) -> ControlClient:
    groups.names = frozenset(names)
    return ControlClient(server.path).connect()


def test_a_delegate_acts_as_the_person_it_names(server: ControlServer, groups: Groups,
                                                handler: Recorder) -> None:
    """The web process (web group, and surveillance to read for its screen) sends a
    supervisor's decision for super1: the table sees a supervisor, the actor names super1, the
    role and the web process's actor, and the peer keeps the kernel's uid (the journal's
    ``uid N name`` is the delegating account)."""
    with _client(server, groups, WEB, SURVEILLANCE) as client:
        client.request("supervisor.void", {"reason": "exposed card"}, actor="tablectl web",
                       acting_for={"name": "super1", "role": "supervisor"})
        client.request("round.status")
    (voided, void_peer), (status, status_peer) = handler.seen
    assert void_peer.role is Role.SUPERVISOR and void_peer.acting_for == "super1"
    assert void_peer.uid == os.getuid()
    assert voided.actor == "super1 [supervisor via tablectl web]"
    assert "super1 as supervisor through uid" in void_peer.describe()
    assert status_peer.role is Role.SURVEILLANCE and status_peer.acting_for is None
    assert status.actor is None


def test_a_delegate_may_not_name_a_role_beyond_web_roles(tmp_path: Path, groups: Groups,
                                                          handler: Recorder) -> None:
    """With ``web_roles = ["operator"]`` the web process cannot act for a supervisor, whoever
    logged in on its screen."""
    policy = AccessPolicy(OPERATORS, SURVEILLANCE, groups_of=groups, superusers=frozenset(),
                          supervisors_group=SUPERVISORS, web_group=WEB,
                          web_roles=frozenset({Role.DEALER}))
    with ControlServer(tmp_path / "c.sock", handler, policy) as server, \
            _client(server, groups, WEB) as client:
        with pytest.raises(RequestRefused) as caught:
            client.request("supervisor.void", {"reason": "x"},
                           acting_for={"name": "super1", "role": "supervisor"})
        client.request("round.open", acting_for={"name": "dealer1", "role": "operator"})
    assert caught.value.code is ErrorCode.FORBIDDEN
    assert "may act as operator only (control.web_roles), not supervisor" in caught.value.message
    assert [(r.verb, p.role) for r, p in handler.seen] == [("round.open", Role.DEALER)]


@pytest.mark.parametrize("own", [OPERATORS, SURVEILLANCE])
def test_only_the_web_group_may_name_someone(server: ControlServer, groups: Groups,
                                              handler: Recorder, own: str) -> None:
    """A dealer (operators group) cannot promote itself by naming a supervisor, nor can
    surveillance command by naming a dealer: ``acting_for`` from outside the web group is
    refused before the table sees it."""
    with _client(server, groups, own) as client:
        with pytest.raises(RequestRefused) as caught:
            client.request("supervisor.void", {"reason": "x"},
                           acting_for={"name": "boss", "role": "supervisor"})
    assert caught.value.code is ErrorCode.FORBIDDEN
    assert "may not act for another person" in caught.value.message
    assert handler.seen == []


def test_acting_for_is_checked_like_any_field(server: ControlServer, groups: Groups,
                                              handler: Recorder) -> None:
    """Root cannot be named; the object has exactly name and role; a stream is never
    delegated (a watch's face-down cards follow the connection's own role)."""
    with _client(server, groups, WEB) as client:
        for acting, code in (({"name": "x", "role": "root"}, ErrorCode.MALFORMED),
                             ({"name": "x"}, ErrorCode.MALFORMED),
                             ({"name": "", "role": "operator"}, ErrorCode.MALFORMED)):
            with pytest.raises(RequestRefused) as caught:
                client.request("round.open", acting_for=acting)
            assert caught.value.code is code, acting
        with pytest.raises(RequestRefused, match="a stream is the delegate's own"):
            client.request("watch", acting_for={"name": "d", "role": "operator"})
    assert handler.seen == []


def test_web_group_and_roles_in_the_service_config(tmp_path: Path) -> None:
    """``[control] web_group`` and ``web_roles`` are read and checked: the web group may not
    be the dealers' or the supervisors' group, and root is no role to delegate."""
    base = (f'[table]\nid = "T"\ngame = "rws-three-card-poker"\n[device]\nkind = "shuffler"\n'
            f'url = "sim"\n[journal]\ndirectory = "{tmp_path}"\n[control]\n'
            f'socket = "{tmp_path / "c.sock"}"\n')
    config = parse_config(base + 'web_group = "tablectl-web"\nweb_roles = ["operator"]\n',
                          source="t.toml")
    assert config.control.web_group == "tablectl-web"
    assert config.control.web_roles == frozenset({"operator"})
    assert parse_config(base, source="t.toml").control.web_group is None
    with pytest.raises(ConfigError, match="web_roles"):
        parse_config(base + 'web_group = "w"\nweb_roles = ["root"]\n', source="t.toml")
    with pytest.raises(ConfigError, match="web_group"):
        parse_config(base + 'web_group = "tablectl-operators"\n', source="t.toml")
