"""Accounts, roles, login sessions and a bounded login throttle.

Accounts are lines ``name:role:argon2-hash`` in a file the web process reads (written by
``tablectl web passwd``); passwords are hashed with Argon2id (argon2-cffi). Sessions are random
tokens held in memory only (a restart logs everyone out), bounded in number and age. Failed
logins for one name back off: after 5 in a row each further try waits 2 s doubling to 5 min,
and the table of names is bounded (the oldest entry goes).
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from controller.web.errors import AccountsError

SESSION_SECONDS = 12 * 3600
MAX_SESSIONS = 256
FREE_FAILURES = 5
MAX_LOCKOUT_SECONDS = 300.0
MAX_TRACKED_NAMES = 1024
_HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)
"""Argon2id at OWASP's minimum (19 MiB, 2 passes, 1 lane) rather than argon2-cffi's default
64 MiB: each login costs the Pi that much memory for a moment, and the web process's whole
budget is 60 MB (docs/web.md). Hashes made with other parameters still verify."""
_DUMMY_HASH: list[str] = []


def _dummy_hash() -> str:
    """A hash to verify against for an unknown name (made once, on the first such login)."""
    if not _DUMMY_HASH:
        _DUMMY_HASH.append(_HASHER.hash(secrets.token_hex(8)))
    return _DUMMY_HASH[0]


class Role(str, Enum):
    """Who is looking: each sees only its pages."""

    DEALER = "dealer"
    """The dealer's screen only."""
    SURVEILLANCE = "surveillance"
    """The console (journal review) and the dealer's screen."""
    SUPERVISOR = "supervisor"
    """The console and the dealer's screen."""

    @property
    def sees_console(self) -> bool:
        return self is not Role.DEALER

    @property
    def sees_face_down(self) -> bool:
        """May see the dealer's face-down hand before the reveal, in the journal's records as on
        the control socket (``controller.service.protocol.Role.sees_face_down``): surveillance,
        which watches the table and is not at it. A Pit Supervisor is at the table."""
        return self is Role.SURVEILLANCE


@dataclass(frozen=True, slots=True)
class Account:
    name: str
    role: Role
    password_hash: str


def load_accounts(path: Path) -> dict[str, Account]:
    """The accounts file, refusing a line that is not ``name:role:hash`` (named by number)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise AccountsError(f"accounts file {path}: {error.strerror or error}") from error
    accounts: dict[str, Account] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, _, rest = line.partition(":")
        role, _, digest = rest.partition(":")
        if not name or not digest.startswith("$argon2"):
            raise AccountsError(f"accounts file {path} line {number}: not name:role:argon2-hash")
        try:
            accounts[name] = Account(name, Role(role), digest)
        except ValueError as error:
            raise AccountsError(f"accounts file {path} line {number}: unknown role {role!r} "
                                f"(one of {', '.join(r.value for r in Role)})") from error
    return accounts


def add_account(path: Path, name: str, role: Role, password: str) -> None:
    """Add or replace ``name`` in the accounts file (mode 0600, replaced atomically)."""
    if not name or ":" in name or len(name) > 64 or not name.isprintable():
        raise AccountsError(f"account name {name!r}: 1-64 printable characters, no ':'")
    if len(password) < 8:
        raise AccountsError("password: at least 8 characters")
    accounts = load_accounts(path) if path.exists() else {}
    accounts[name] = Account(name, role, _HASHER.hash(password))
    temporary = path.with_name(path.name + ".new")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        for account in accounts.values():
            handle.write(f"{account.name}:{account.role.value}:{account.password_hash}\n")
    os.replace(temporary, path)


@dataclass(frozen=True, slots=True)
class Session:
    name: str
    role: Role
    expires: float


class Authenticator:
    """Checks passwords (with the throttle) and holds the sessions."""

    def __init__(self, accounts: dict[str, Account]) -> None:
        self.accounts = accounts
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._failures: OrderedDict[str, tuple[int, float]] = OrderedDict()
        self._lock = threading.Lock()

    def login(self, name: str, password: str) -> str | None:
        """A session token, or None (wrong name or password, or throttled: the same answer)."""
        now = time.monotonic()
        with self._lock:
            count, until = self._failures.get(name, (0, 0.0))
            if now < until:
                return None
        account = self.accounts.get(name)
        try:
            # A missing account costs the same hash as a wrong password: no name oracle.
            _HASHER.verify(account.password_hash if account else _dummy_hash(), password)
            good = account is not None
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            good = False
        with self._lock:
            if not good:
                count += 1
                wait = 0.0 if count < FREE_FAILURES else \
                    min(2.0 ** (count - FREE_FAILURES + 1), MAX_LOCKOUT_SECONDS)
                self._failures[name] = (count, now + wait)
                self._failures.move_to_end(name)
                while len(self._failures) > MAX_TRACKED_NAMES:
                    self._failures.popitem(last=False)
                return None
            self._failures.pop(name, None)
            assert account is not None
            return self._open(account.name, account.role)

    def open_local(self, role: Role) -> str:
        """A session for a loopback viewer when no accounts are configured (the kiosk)."""
        with self._lock:
            return self._open("local", role)

    def _open(self, name: str, role: Role) -> str:
        token = secrets.token_urlsafe(32)
        self._sessions[token] = Session(name, role, time.monotonic() + SESSION_SECONDS)
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return token

    def session(self, token: str | None) -> Session | None:
        if not token:
            return None
        with self._lock:
            found = self._sessions.get(token)
            if found is None or found.expires < time.monotonic():
                self._sessions.pop(token, None)
                return None
            return found

    def logout(self, token: str | None) -> None:
        with self._lock:
            self._sessions.pop(token or "", None)
