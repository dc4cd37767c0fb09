"""Sending the dealer's screen's commands to the table, as the person who gave them.

The web process is one account to the kernel; the person at its screen is named in each
request's ``acting_for`` (docs/service.md, "Delegation"), so the socket judges the request in
that person's role and the journal records their name and role beside the web process's
account. Who acts is decided here (:func:`acting`): a supervisor's verb acts as the supervisor
present at the screen (PIN), else as the session's own account if it is a supervisor's, else it
is refused before it reaches the socket, which would refuse it again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.service.control.client import ControlClient, RequestRefused
from controller.service.errors import ControlError
from controller.roles import TABLE_ROLES, Role
from controller.service.protocol import MAX_TEXT_CHARS, VERBS
from controller.web.auth import Session
from controller.web.presence import SupervisorPresence

COMMAND_SECONDS = 10.0
"""The socket answers within its own 5 s table wait; this bounds a stuck connection."""
ACTOR = "tablectl web"
SUPERVISOR_VERBS = frozenset(v for v in VERBS if v.startswith("supervisor.")) \
    | {"journal.acknowledge"}
"""The verbs the table gives only to a supervisor."""
SCREEN_VERBS = frozenset(v for v, spec in VERBS.items() if not spec.streams)


@dataclass(frozen=True, slots=True)
class Actor:
    """The person a request is sent for, in the socket's words."""

    name: str
    role: Role
    present: bool
    """A supervisor present by PIN (their idle time restarts with this action)."""

    def acting_for(self) -> dict[str, str]:
        return {"name": self.name, "role": self.role.socket_name}


@dataclass(frozen=True, slots=True)
class Refused:
    """A request the web process refuses itself (HTTP 403, ``code`` ``role`` or ``bad_request``)."""

    code: str
    message: str


def acting(viewer: Session, verb: str, presence: SupervisorPresence) -> Actor | Refused:
    """Who sends ``verb`` from ``viewer``'s screen, or why nobody may."""
    if verb not in SCREEN_VERBS:
        return Refused("bad_request", f"unknown verb {verb!r}")
    if verb in SUPERVISOR_VERBS:
        present = presence.present(viewer.id, touch=True)
        if present is not None:
            return Actor(present.name, Role.SUPERVISOR, True)
        if viewer.role is Role.SUPERVISOR:
            return Actor(viewer.name, Role.SUPERVISOR, False)
        return Refused("role", f"{verb}: a supervisor's decision; a supervisor must log in at "
                       "this screen (name and PIN) first")
    if viewer.role not in TABLE_ROLES:
        return Refused("role", f"{verb}: {viewer.role.value} watches the table and does not "
                       "command it")
    return Actor(viewer.name, viewer.role, False)


def attempt_on_record(viewer: Session, verb: str) -> Actor | None:
    """Who a refused supervisor's verb is still sent for, so that the table refuses it and the
    journal records the attempt: a dealer, in the dealer's own name and role. The table refuses
    every supervisor decision from a dealer with the clause that gives it to a supervisor
    (``controller.table.machine``, ``clockgate``), and journals the command and its refusal
    (``input_command``, ``command_refused``), bounded: each text cut to the socket's 500
    characters (:func:`clipped`), the body at most 16 KiB. An attempt the socket cannot read
    (a void without its reason) is refused there, unrecorded, like any malformed request.
    ``None``: nothing to record (not a supervisor's verb, or a viewer who commands nothing)."""
    if verb not in SUPERVISOR_VERBS or viewer.role is not Role.DEALER:
        return None
    return Actor(viewer.name, Role.DEALER, False)


def clipped(args: Mapping[str, Any]) -> dict[str, Any]:
    """An attempt's arguments with each text cut to the socket's limit, so that an attempt
    with a 16 KiB reason is still recorded (in 500 characters) rather than refused unread."""
    return {name: value[:MAX_TEXT_CHARS] if isinstance(value, str) else value
            for name, value in args.items()}


@dataclass(frozen=True, slots=True)
class Answer:
    """The socket's answer: ``result`` when accepted, else the error's code and message."""

    ok: bool
    result: Mapping[str, Any] | None = None
    code: str = ""
    message: str = ""


class TableCommander:
    """One connection per command (a command is rare; an idle one the socket would close)."""

    def __init__(self, socket_path: Path | None, timeout: float = COMMAND_SECONDS) -> None:
        self.socket_path = socket_path
        self.timeout = timeout

    def send(self, verb: str, args: Mapping[str, Any], actor: Actor) -> Answer:
        if self.socket_path is None:
            return Answer(False, code="unavailable", message="no table is configured "
                          "(web.socket)")
        try:
            with ControlClient(self.socket_path, timeout=self.timeout) as client:
                result = client.request(verb, args, actor=ACTOR, acting_for=actor.acting_for())
        except RequestRefused as refused:
            return Answer(False, code=str(getattr(refused.code, "value", refused.code)),
                          message=refused.message)
        except (ControlError, OSError) as error:
            return Answer(False, code="unavailable", message=f"the table service does not "
                          f"answer: {error}")
        return Answer(True, result)
