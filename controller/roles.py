"""Who is acting or looking, and what that lets them do and see: one :class:`Role` for the
table, the control socket and the web (issue 35, "one rule, one place").

Each layer takes a subset, checked here beside the enum rather than in a second enum of its own:

* the table judges a command as a dealer's or a Pit Supervisor's (:data:`TABLE_ROLES`,
  :attr:`Role.at_table`); the journal records that value (``dealer:dana``);
* a person has one of :data:`PERSON_ROLES`: an account in the web's accounts file, and the role a
  delegate (the web process, the studio gateway) names in ``acting_for`` on the control socket;
* the control socket gives every connected peer a role from its credentials, ``none`` and
  ``root`` included, and spells the dealer ``operator`` there (:attr:`Role.socket_name`,
  :meth:`Role.from_socket_name`): its requests, its replies, ``control.web_roles`` in
  ``tablectl.toml`` and the journal's delegated actors (``dana [operator via tablectl web]``)
  have always said so, and still do.

Who may see a card dealt face down before the table reveals it is :attr:`Role.sees_face_down`,
the one rule every output (socket, watch, page, export) asks.
"""

from __future__ import annotations

from enum import Enum


class Access(str, Enum):
    """What a verb does to the table, which decides who may send it."""

    READ = "read"
    """Looks only (watch, status, list): surveillance may."""
    COMMAND = "command"
    """Changes the table or the money: dealers, supervisors (and root) only."""


class Role(str, Enum):
    """What a person or a connected peer is; the value is the word the journal, the accounts
    file and the web's config use (the socket's word for a dealer is :attr:`socket_name`)."""

    NONE = "none"
    """A control-socket peer in none of the configured groups: may do nothing."""
    DEALER = "dealer"
    """Commands the table; the table refuses a supervisor's decision from them. Sees the
    dealer's screen only."""
    SURVEILLANCE = "surveillance"
    """Watches the table and is not at it: reads, the console and the dealer's screen."""
    SUPERVISOR = "supervisor"
    """Pit Supervisor or above (RWS-NC3P 5.11, MBS-R3P 6.2: a higher position may act):
    commands, including the decisions the rules give them; the console and the dealer's screen."""
    ROOT = "root"
    """Root or the service's own account on the control socket: everything."""

    @property
    def socket_name(self) -> str:
        """The word the control socket uses for this role (``operator`` for a dealer)."""
        return _SOCKET_NAMES.get(self, self.value)

    @classmethod
    def from_socket_name(cls, name: str) -> Role:
        """The role the control socket's word names; :class:`ValueError` for any other word
        (``dealer`` included: the socket has always said ``operator``)."""
        for role in cls:
            if role.socket_name == name:
                return role
        raise ValueError(f"{name!r} is not a control-socket role")

    @property
    def at_table(self) -> Role:
        """The role the table judges this one's commands by (:data:`TABLE_ROLES`): a
        supervisor and root act as a Pit Supervisor, everyone else as a dealer (the table
        never sees a peer that may not command; :meth:`may` keeps them off)."""
        return Role.SUPERVISOR if self in (Role.SUPERVISOR, Role.ROOT) else Role.DEALER

    def may(self, access: Access) -> bool:
        """Whether this role may send a verb of ``access`` on the control socket."""
        if self in (Role.DEALER, Role.SUPERVISOR, Role.ROOT):
            return True
        return self is Role.SURVEILLANCE and access is Access.READ

    @property
    def sees_face_down(self) -> bool:
        """May see a card dealt face down before the table reveals it (the dealer's hand while
        RWS-3CP players decide), on the socket as in the journal's records on the web:
        surveillance, which watches the table and is not at it, and root/the service account,
        which holds the journal anyway. Dealers and Pit Supervisors at the table may not
        (docs/service.md, "Face-down cards")."""
        return self in (Role.SURVEILLANCE, Role.ROOT)

    @property
    def sees_console(self) -> bool:
        """May open the web's console (journal review): surveillance and supervisors; a dealer
        sees the dealer's screen only."""
        return self in (Role.SURVEILLANCE, Role.SUPERVISOR)


_SOCKET_NAMES = {Role.DEALER: "operator"}
"""Where the control socket's word differs from the role's value."""

TABLE_ROLES = (Role.DEALER, Role.SUPERVISOR)
"""The roles a table command carries (and the journal records)."""
PERSON_ROLES = (Role.DEALER, Role.SURVEILLANCE, Role.SUPERVISOR)
"""A person's roles: a web account's, and what a delegate may name in ``acting_for``."""


def person_role(value: str) -> Role:
    """The person's role ``value`` names (``dealer``, ``surveillance``, ``supervisor``);
    :class:`ValueError` naming the choices for anything else."""
    for role in PERSON_ROLES:
        if role.value == value:
            return role
    raise ValueError(f"unknown role {value!r} (one of {', '.join(r.value for r in PERSON_ROLES)})")
