"""Who may reach the control socket and what they may send: the socket file's group and mode,
the peer's credentials from the kernel (``SO_PEERCRED``), and the role they map to.

Who may do what is decided by the kernel, not by anything the peer says: at connect the server
reads the peer's uid/gid with ``SO_PEERCRED`` and resolves its groups once. Root and the
service's own user may do everything, members of the supervisors group command as Pit
Supervisors, members of the operators group as dealers, members of the surveillance group may
only ``watch``/``round.status``/``wager.list``; anyone else is refused. The socket file is mode
0660 with the configured socket group, so that accounts in neither group cannot even connect;
the verb check is the second wall. The group lookup is injectable (:class:`AccessPolicy`
``groups_of``) because tests cannot create system groups.

Delegation (the web process): the kernel names the web process's account, not the person at
its screen. Members of ``control.web_group`` (and root or the service's own account) may name
that person in a request's ``acting_for``; the request is then judged and journaled as that
person in that role (:func:`AccessPolicy.delegated`), never in a role outside
``control.web_roles``, and the journal's actor keeps the delegating account beside the person.
A delegate's own requests (without ``acting_for``) keep the role of its own groups.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import socket
import stat
import struct
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import structlog

from controller.service.errors import ServiceError
from controller.roles import PERSON_ROLES, Role
from controller.service.protocol import ErrorCode, Refusal, Request

log = structlog.get_logger(__name__)

SOCKET_MODE = 0o660
_CREDS = struct.Struct("3i")


@dataclass(frozen=True, slots=True)
class Peer:
    """A connected client as the kernel describes it (``SO_PEERCRED``)."""

    pid: int | None
    uid: int | None
    gid: int | None
    role: Role
    delegates: frozenset[Role] = frozenset()
    """The roles this peer may act in for a person it names (``acting_for``): empty unless it
    is in ``control.web_group`` (or is root or the service's own account)."""
    acting_for: str | None = None
    """The person this request is for, when a delegate sent it (``role`` is then theirs)."""

    def describe(self) -> str:
        own = f"uid {self.uid} (pid {self.pid})"
        if self.acting_for is None:
            return own
        return f"{self.acting_for} as {self.role.socket_name} through {own}"


GroupsOf = Callable[[int, int], frozenset[str]]


def system_groups_of(uid: int, gid: int) -> frozenset[str]:
    """Names of the groups of ``uid`` (primary ``gid`` and supplementary) from the system."""
    try:
        gids = os.getgrouplist(pwd.getpwuid(uid).pw_name, gid)
    except KeyError:
        gids = [gid]
    names = set()
    for one in gids:
        with contextlib.suppress(KeyError):
            names.add(grp.getgrgid(one).gr_name)
    return frozenset(names)


@dataclass(frozen=True, slots=True)
class AccessPolicy:
    """Maps peer credentials to a :class:`Role`."""

    operators_group: str
    surveillance_group: str
    groups_of: GroupsOf = system_groups_of
    supervisors_group: str | None = None
    """Members command as Pit Supervisors (the table accepts their supervisor decisions)."""
    superusers: frozenset[int] = field(default_factory=lambda: frozenset({0, os.getuid()}))
    """uids that may do everything: root and the service's own user."""
    web_group: str | None = None
    """Members may send requests for a person they name (``acting_for``): the web process."""
    web_roles: frozenset[Role] = frozenset({Role.DEALER, Role.SUPERVISOR})
    """The roles a member of ``web_group`` may act in; never root."""
    studio_group: str | None = None
    """Members may act for a game server they name, as operator only: the studio gateway
    (docs/studio.md)."""

    def delegates_for(self, uid: int, gid: int) -> frozenset[Role]:
        """The roles a peer may act in for a person it names (none for most peers)."""
        if uid in self.superusers:
            return frozenset(PERSON_ROLES)
        if self.web_group is None and self.studio_group is None:
            return frozenset()
        groups = self.groups_of(uid, gid)
        roles: frozenset[Role] = frozenset()
        if self.web_group is not None and self.web_group in groups:
            roles |= self.web_roles & frozenset(PERSON_ROLES)
        if self.studio_group is not None and self.studio_group in groups:
            roles |= {Role.DEALER}
        return roles

    def delegated(self, peer: Peer, request: Request) -> tuple[Peer, Request]:
        """The peer and request as the table should judge them: unchanged without
        ``acting_for``; else the named person in the named role (refused, ``forbidden``, when
        the peer is no delegate or the role is beyond what the config gives delegates). The
        request's actor becomes ``name [role via <delegate's actor>]`` so the journal names
        the person, the role and (through the peer's uid) the delegating account."""
        acting = request.acting_for
        if acting is None:
            return peer, request
        if request.spec.streams:
            raise Refusal(ErrorCode.BAD_ARGS, f"{request.verb}: a stream is the delegate's own "
                          "(no acting_for)", request.id)
        if acting.role not in peer.delegates:
            if not peer.delegates:
                why = (f"{request.verb} not permitted: {peer.describe()} may not act for "
                       f"another person (it is not in control.web_group"
                       f"{' ' + self.web_group if self.web_group else ', which is not set'}"
                       " nor control.studio_group)")
            else:
                why = (f"{request.verb} not permitted: {peer.describe()} may act as "
                       f"{', '.join(sorted(r.socket_name for r in peer.delegates))} only "
                       f"(control.web_roles), not {acting.role.socket_name}")
            raise Refusal(ErrorCode.FORBIDDEN, why, request.id)
        via = f" via {request.actor}" if request.actor else " via delegate"
        acted = Peer(peer.pid, peer.uid, peer.gid, acting.role, acting_for=acting.name)
        return acted, replace(request, actor=f"{acting.name} [{acting.role.socket_name}{via}]")

    def role_for(self, uid: int, gid: int) -> Role:
        if uid in self.superusers:
            return Role.ROOT
        groups = self.groups_of(uid, gid)
        if self.supervisors_group is not None and self.supervisors_group in groups:
            return Role.SUPERVISOR
        if self.operators_group in groups:
            return Role.DEALER
        if self.surveillance_group in groups:
            return Role.SURVEILLANCE
        return Role.NONE

    def refusal(self, peer: Peer, request: Request) -> str | None:
        """Why ``peer`` may not send ``request`` (``None`` when it may)."""
        spec = request.spec
        if peer.role.may(spec.access):
            return None
        if peer.role is Role.NONE:
            groups = [g for g in (self.supervisors_group, self.operators_group,
                                  self.surveillance_group) if g]
            return (f"{request.verb} not permitted: {peer.describe()} is in none of "
                    f"{', '.join(groups)}")
        return (f"{request.verb} not permitted: it is a command, and {peer.describe()} is in "
                f"{self.surveillance_group}, which may only watch, round.status and wager.list")


def peer_of(sock: socket.socket, policy: AccessPolicy) -> Peer:
    """The connected peer as the kernel names it, with its role (none if the lookup fails)."""
    pid, uid, gid = _CREDS.unpack(
        sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CREDS.size))
    try:
        role = policy.role_for(uid, gid)
        delegates = policy.delegates_for(uid, gid)
    except Exception:
        log.exception("group lookup failed", uid=uid)
        role, delegates = Role.NONE, frozenset()
    return Peer(pid, uid, gid, role, delegates)


def bind_socket_file(sock: socket.socket, path: Path, group: str | None) -> int:
    """Bind ``sock`` at ``path``, mode 0660 and group ``group``; the file's inode (so that
    only this file, not a successor's, is removed at stop)."""
    try:
        sock.bind(str(path))
    except OSError as error:
        raise ServiceError(f"control socket {path}: cannot bind: "
                           f"{error.strerror or error}") from error
    inode = os.stat(path).st_ino
    gid = -1
    if group:
        try:
            gid = grp.getgrnam(group).gr_gid
        except KeyError:
            raise ServiceError(f"control socket {path}: group {group!r} "
                               "does not exist (control.socket_group)") from None
    try:
        os.chown(path, -1, gid)
        os.chmod(path, SOCKET_MODE)
    except OSError as error:
        raise ServiceError(f"control socket {path}: cannot set group {group} and mode 0660: "
                           f"{error.strerror or error}") from error
    return inode


def remove_stale_socket(path: Path) -> None:
    """A socket file left by a killed service is removed; a live one or a non-socket is not."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise ServiceError(f"control socket {path}: {error.strerror}") from error
    if not stat.S_ISSOCK(mode):
        raise ServiceError(f"control socket {path}: exists and is not a socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC) as probe:
        try:
            probe.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            path.unlink(missing_ok=True)
            return
        except OSError as error:
            raise ServiceError(f"control socket {path}: {error.strerror}") from error
    raise ServiceError(f"control socket {path}: another tablectl is listening on it")
