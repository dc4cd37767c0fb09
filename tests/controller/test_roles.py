"""One ``Role`` for the table, the control socket and the web (issue 35, "one rule, one
place"), with every word the socket, the config, the accounts file and the journal have always
used still meaning what it meant."""

from __future__ import annotations

import pytest

from controller.roles import PERSON_ROLES, TABLE_ROLES, Access, Role, person_role
from controller.service import protocol
from controller.table import commands
from controller.web import auth


def test_the_table_the_socket_and_the_web_share_one_enum() -> None:
    """The names the three layers import are the one class, not three with the same words."""
    assert commands.Role is Role and protocol.Role is Role and auth.Role is Role
    assert protocol.Access is Access


@pytest.mark.parametrize(("role", "sees"), [
    (Role.NONE, False), (Role.DEALER, False), (Role.SUPERVISOR, False),
    (Role.SURVEILLANCE, True), (Role.ROOT, True),
])
def test_who_sees_a_face_down_card_is_one_rule(role: Role, sees: bool) -> None:
    """Surveillance (not at the table) and root see the dealer's face-down hand before the
    reveal; a dealer and a Pit Supervisor at the table do not, on the socket as on the web."""
    assert role.sees_face_down is sees


def test_the_socket_says_operator_for_a_dealer() -> None:
    """The control socket's word for a dealer stays ``operator`` (requests, replies,
    ``control.web_roles``, delegated actors in the journal); every other role is its value,
    and the socket takes no other word."""
    assert [r.socket_name for r in Role] == ["none", "operator", "surveillance", "supervisor",
                                             "root"]
    assert all(Role.from_socket_name(r.socket_name) is r for r in Role)
    with pytest.raises(ValueError, match="'dealer' is not a control-socket role"):
        Role.from_socket_name("dealer")


def test_the_journal_and_the_accounts_file_keep_their_words() -> None:
    """A table command's role is journaled as ``dealer`` or ``supervisor``; an account is a
    dealer, surveillance or a supervisor, and nothing else."""
    assert [r.value for r in TABLE_ROLES] == ["dealer", "supervisor"]
    assert Role("dealer") is Role.DEALER and Role("supervisor") is Role.SUPERVISOR
    assert [person_role(r.value) for r in PERSON_ROLES] == list(PERSON_ROLES)
    for word in ("root", "none", "operator"):
        with pytest.raises(ValueError, match="one of dealer, surveillance, supervisor"):
            person_role(word)


@pytest.mark.parametrize(("role", "at_table", "commands_", "reads"), [
    (Role.NONE, Role.DEALER, False, False),
    (Role.SURVEILLANCE, Role.DEALER, False, True),
    (Role.DEALER, Role.DEALER, True, True),
    (Role.SUPERVISOR, Role.SUPERVISOR, True, True),
    (Role.ROOT, Role.SUPERVISOR, True, True),
])
def test_what_each_role_may_do(role: Role, at_table: Role, commands_: bool, reads: bool) -> None:
    """The table judges a supervisor's and root's commands as a Pit Supervisor's (RWS-NC3P
    5.11: a higher position may act), everyone else's as a dealer's; surveillance only reads."""
    assert role.at_table is at_table and at_table in TABLE_ROLES
    assert role.may(Access.COMMAND) is commands_ and role.may(Access.READ) is reads
    assert role.sees_console is (role in (Role.SURVEILLANCE, Role.SUPERVISOR))


@pytest.mark.parametrize("role", [Role.NONE, Role.SURVEILLANCE, Role.ROOT])
def test_a_table_command_refuses_a_role_the_table_does_not_judge_by(role: Role) -> None:
    from controller.table.commands import OpenRound

    with pytest.raises(ValueError, match="dealer, supervisor"):
        OpenRound(actor="x", role=role)
    assert OpenRound(actor="x", role=role.at_table).role in (Role.DEALER, Role.SUPERVISOR)
