"""Accounts, roles, login sessions, PINs and the login throttle.

Accounts are lines ``name:role:argon2-hash[:argon2-pin-hash[:argon2-badge-hash]]`` in a file
the web process reads (written by ``tablectl web passwd``, ``--pin`` for a supervisor's or a
dealer's PIN, ``--badge`` for a supervisor's badge id); passwords, PINs and badge ids are
hashed with Argon2id (argon2-cffi). Sessions are random tokens held in memory only (a restart
logs everyone out), bounded in age, and in number per account (:data:`MAX_SESSIONS_PER_ACCOUNT`,
the account's own oldest goes): one account logging in again and again never logs out another.
Failed tries back off per account name, per client address and per name at an address
(:class:`.throttle.LoginThrottle`), for passwords and PINs apart: a shared kiosk's real users
get in while a guesser there waits.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

import structlog

from controller.roles import PERSON_ROLES, Role, person_role
from controller.web.throttle import Backoff, LoginThrottle
from drivers.shoe.codes import printable

from controller.web.errors import AccountsError

log = structlog.get_logger(__name__)

SESSION_SECONDS = 12 * 3600
MAX_SESSIONS_PER_ACCOUNT = 8
"""A person's screens (a dealer's kiosk and a spare, a supervisor's tablet ...)."""
MAX_SESSIONS = 4096
"""All accounts together; when reached a new login is refused, nobody is logged out."""
FREE_FAILURES = 5
FREE_ADDRESS_FAILURES = 20
"""A dealer's kiosk is one address that several people mistype at."""
FREE_PIN_FAILURES = 3
MAX_LOCKOUT_SECONDS = 300.0
MAX_TRACKED = 4096
MIN_PIN_DIGITS = 6
MAX_PIN_DIGITS = 12
PIN_ROLES = frozenset({Role.SUPERVISOR, Role.DEALER})
"""Who may have a PIN: a supervisor answers a hold at the dealer's screen with it, a dealer logs
in at the kiosk with it (issue 36: no keyboard in the shift). What each PIN opens is its own
method: :meth:`Authenticator.check_pin` a supervisor's, :meth:`Authenticator.login_pin` a
dealer's, so a dealer's PIN never answers a hold and a supervisor's never opens a session."""
MAX_BADGE_CHARS = 64
"""A badge id longer than this is not a badge (a barcode, a stuck key): the reader thread
drops such a line (:mod:`controller.web.badge`), and ``passwd --badge`` refuses it."""
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


@dataclass(frozen=True, slots=True)
class Account:
    name: str
    role: Role
    password_hash: str
    pin_hash: str | None = None
    """A supervisor's PIN, for answering a hold on the dealer's screen, or a dealer's, for
    logging in at the kiosk by taps (``passwd --pin``)."""
    badge_hash: str | None = None
    """A supervisor's badge id, read by the kiosk's badge reader (``passwd --badge``)."""


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
        fields = line.split(":")
        name, role, digest, pin, badge = (fields + ["", ""])[:5] if len(fields) >= 3 else \
            ("", "", "", "", "")
        if len(fields) > 5 or not name or not digest.startswith("$argon2") \
                or any(extra and not extra.startswith("$argon2") for extra in (pin, badge)):
            raise AccountsError(f"accounts file {path} line {number}: not "
                                "name:role:argon2-hash[:argon2-pin-hash[:argon2-badge-hash]]")
        try:
            accounts[name] = Account(name, person_role(role), digest, pin or None, badge or None)
        except ValueError as error:
            raise AccountsError(f"accounts file {path} line {number}: {error}") from error
    return accounts


def add_account(path: Path, name: str, role: Role, password: str,
                pin: str | None = None, badge: str | None = None) -> None:
    """Add or replace ``name`` in the accounts file (mode 0600, replaced atomically); ``pin``
    and ``badge`` only for a supervisor (the PIN they answer a hold with at the table, the id
    their badge types into the kiosk's reader)."""
    if not name or ":" in name or len(name) > 64 or not name.isprintable():
        raise AccountsError(f"account name {name!r}: 1-64 printable characters, no ':'")
    if role not in PERSON_ROLES:
        raise AccountsError(f"role {role.value!r}: an account is one of "
                            f"{', '.join(r.value for r in PERSON_ROLES)}")
    if len(password) < 8:
        raise AccountsError("password: at least 8 characters")
    if not password.isprintable():
        # a NUL, a tab, a carriage return (a CRLF line on stdin) or an escape cannot be typed
        # at the login page: the account could never log in (never echoed: a credential)
        raise AccountsError("password: printable characters only, no control characters "
                            "(NUL, tab, carriage return, escape ...)")
    if pin is not None:
        if role not in PIN_ROLES:
            raise AccountsError(f"PIN: only a supervisor or a dealer has one "
                                f"(not a {role.value})")
        if not pin.isdigit() or not MIN_PIN_DIGITS <= len(pin) <= MAX_PIN_DIGITS:
            raise AccountsError(f"PIN: {MIN_PIN_DIGITS}-{MAX_PIN_DIGITS} digits")
    if badge is not None:
        if role is not Role.SUPERVISOR:
            raise AccountsError(f"badge: only a supervisor has one (not a {role.value})")
        if not badge or len(badge) > MAX_BADGE_CHARS or not printable(badge) \
                or badge != badge.strip():
            raise AccountsError(f"badge: 1-{MAX_BADGE_CHARS} printable characters, as the "
                                "reader types it")
    accounts = load_accounts(path) if path.exists() else {}
    accounts[name] = Account(name, role, _HASHER.hash(password),
                             None if pin is None else _HASHER.hash(pin),
                             None if badge is None else _HASHER.hash(badge))
    temporary = path.with_name(path.name + ".new")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        for account in accounts.values():
            pin_part = f":{account.pin_hash or ''}" if account.pin_hash or account.badge_hash \
                else ""
            pin_part += f":{account.badge_hash}" if account.badge_hash else ""
            handle.write(f"{account.name}:{account.role.value}:{account.password_hash}"
                         f"{pin_part}\n")
    os.replace(temporary, path)


@dataclass(frozen=True, slots=True)
class Session:
    name: str
    role: Role
    expires: float
    id: str = ""
    """Names the session to the presence and stream tables (not the cookie: never sent)."""
    csrf: str = ""
    """The token its pages carry and its state-changing requests must send back."""


def _backoff(free: int) -> Backoff:
    return Backoff(free=free, longest=MAX_LOCKOUT_SECONDS, capacity=MAX_TRACKED)


class Authenticator:
    """Checks passwords and PINs (with the throttles) and holds the sessions."""

    def __init__(self, accounts: dict[str, Account]) -> None:
        self.accounts = accounts
        self._sessions: dict[str, Session] = {}
        self._local: Session | None = None
        self._lock = threading.Lock()
        self.logins = LoginThrottle(_backoff(FREE_FAILURES), _backoff(FREE_ADDRESS_FAILURES),
                                    "login")
        self.pins = LoginThrottle(_backoff(FREE_PIN_FAILURES), _backoff(FREE_ADDRESS_FAILURES),
                                  "PIN")
        self.pin_names = self.pins.names
        self.pin_addresses = self.pins.addresses

    def login(self, name: str, password: str, address: str = "") -> str | None:
        """A session token, or None (wrong name or password, throttled by name or by address,
        or no room for a session: the same answer, so the throttle is no oracle)."""
        account = self._check(name, password, address, self.logins,
                              lambda a: a.password_hash)
        if account is None:
            return None
        with self._lock:
            return self._open(account.name, account.role)

    def check_pin(self, name: str, pin: str, address: str = "") -> Account | None:
        """The supervisor whose PIN this is, or None (same throttling as :meth:`login`, with
        its own tables: a PIN is short, so fewer free tries)."""
        account = self._check(name, pin, address, self.pins,
                              lambda a: a.pin_hash if a.role is Role.SUPERVISOR else None)
        return account

    def login_pin(self, name: str, pin: str, address: str = "") -> str | None:
        """A dealer's session by name and PIN (the kiosk's picker and pad), or None; throttled
        with the PIN's tables, as :meth:`check_pin`. Only a dealer's PIN opens a session: a
        supervisor's PIN is a short secret for their presence at a screen somebody already
        logged in to, not a way to the console."""
        account = self._check(name, pin, address, self.pins,
                              lambda a: a.pin_hash if a.role is Role.DEALER else None)
        if account is None:
            return None
        with self._lock:
            return self._open(account.name, account.role)

    def pin_dealers(self) -> list[str]:
        """The dealers who may log in by PIN, for the kiosk's name picker."""
        return sorted(a.name for a in self.accounts.values()
                      if a.role is Role.DEALER and a.pin_hash)

    def check_badge(self, badge: str, address: str = "") -> Account | None:
        """The supervisor whose badge this is, or None. Argon2id hashes cannot be looked up, so
        the read is verified against every supervisor's badge hash (a few supervisors: one hash
        each per read). Throttled with the PIN's tables: per badge (keyed by a digest, never
        the id itself) and per address."""
        key = "badge " + hashlib.blake2b(badge.encode(), digest_size=16).hexdigest()
        if self.pin_names.wait(key) > 0 or self.pin_addresses.wait(address) > 0:
            return None
        found: Account | None = None
        digests = [a for a in self.accounts.values()
                   if a.role is Role.SUPERVISOR and a.badge_hash]
        for account in digests or [None]:
            try:
                _HASHER.verify((account and account.badge_hash) or _dummy_hash(), badge)
                found = found or account
            except (VerifyMismatchError, VerificationError, InvalidHashError):
                pass
        if found is None:
            self.pin_names.failed(key)
            self.pin_addresses.failed(address)
            return None
        self.pin_names.succeeded(key)
        return found

    def _check(self, name: str, secret: str, address: str, throttle: LoginThrottle,
               digest_of: Callable[[Account], str | None]) -> Account | None:
        account = self.accounts.get(name)
        digest = digest_of(account) if account is not None else None
        if throttle.wait(name, address, known=digest is not None) > 0:
            return None
        try:
            # A missing account (or PIN) costs the same hash as a wrong one: no name oracle.
            _HASHER.verify(digest or _dummy_hash(), secret)
            good = digest is not None
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            good = False
        if not good:
            throttle.failed(name, address)
            return None
        throttle.succeeded(name, address)  # the address keeps its count (LoginThrottle)
        return account

    def local(self, role: Role) -> Session:
        """The one session of every loopback viewer when no accounts are configured (the
        kiosk); made once, so its CSRF token is stable for the process's life."""
        with self._lock:
            if self._local is None or self._local.role is not role:
                self._local = Session("local", role, float("inf"), "local",
                                      secrets.token_urlsafe(32))
            return self._local

    def _open(self, name: str, role: Role) -> str | None:
        now = time.monotonic()
        mine = [(s.expires, t) for t, s in self._sessions.items() if s.name == name]
        for _, token in sorted(mine)[:max(0, len(mine) - MAX_SESSIONS_PER_ACCOUNT + 1)]:
            del self._sessions[token]  # the account's own oldest: never another account's
        if len(self._sessions) >= MAX_SESSIONS:
            for token in [t for t, s in self._sessions.items() if s.expires < now]:
                del self._sessions[token]
            if len(self._sessions) >= MAX_SESSIONS:
                log.warning("login refused: the session table is full", sessions=MAX_SESSIONS)
                return None
        token = secrets.token_urlsafe(32)
        self._sessions[token] = Session(name, role, now + SESSION_SECONDS,
                                        secrets.token_urlsafe(16), secrets.token_urlsafe(32))
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

    def sessions_of(self, name: str) -> int:
        with self._lock:
            return sum(1 for s in self._sessions.values() if s.name == name)

    def logout(self, token: str | None) -> Session | None:
        """End the session (the one that was, for its presence and streams to end too)."""
        if not token:
            return None
        with self._lock:
            return self._sessions.pop(token, None)
