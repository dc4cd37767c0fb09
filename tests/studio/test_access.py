"""The studio gateway's account at the control socket: a member of ``control.studio_group``
may act for a game server it names, as operator only (least privilege: never a supervisor's
decision), and the config keeps that group apart from the groups that command or delegate."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.errors import TablectlError
from controller.service.control.access import AccessPolicy, Peer
from controller.service.config import load_config
from controller.service.protocol import ActingFor, ErrorCode, Refusal, Request, Role

STUDIO_UID = 4242


def _policy() -> AccessPolicy:
    return AccessPolicy("ops", "surv", groups_of=lambda uid, gid: frozenset({"studio"}),
                        supervisors_group="sups", web_group="web", studio_group="studio",
                        superusers=frozenset({0}))


def _request(role: Role) -> Request:
    return Request(1, "round.open", actor="studio k1", acting_for=ActingFor("gs1", role))


def test_studio_group_delegates_as_operator_only() -> None:
    """The gateway's account acts for ``gs1`` as a dealer and is journaled as such; asking
    for the supervisor role is refused ``forbidden``."""
    policy = _policy()
    peer = Peer(1, STUDIO_UID, STUDIO_UID, policy.role_for(STUDIO_UID, STUDIO_UID),
                policy.delegates_for(STUDIO_UID, STUDIO_UID))
    assert peer.delegates == frozenset({Role.DEALER})
    acted, request = policy.delegated(peer, _request(Role.DEALER))
    assert (acted.role, request.actor) == (Role.DEALER, "gs1 [operator via studio k1]")
    with pytest.raises(Refusal) as caught:
        policy.delegated(peer, _request(Role.SUPERVISOR))
    assert caught.value.code is ErrorCode.FORBIDDEN


def _config(tmp_path: Path, control: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text('[table]\nid = "S1"\ngame = "live-three-pictures"\n\n[device]\n'
                    'kind = "live"\ndialect = "beetek"\nurl = "sim"\n\n[journal]\n'
                    f'directory = "{tmp_path / "j"}"\n\n[control]\n{control}')
    return path


def test_config_reads_studio_group_and_keeps_it_apart(tmp_path: Path) -> None:
    """``control.studio_group`` is read; the same group as ``web_group`` is refused by name."""
    config = load_config(_config(tmp_path, 'studio_group = "tablectl-studio"\n'))
    assert config.control.studio_group == "tablectl-studio"
    with pytest.raises(TablectlError, match="studio_group"):
        load_config(_config(tmp_path, 'web_group = "w"\nstudio_group = "w"\n'))
