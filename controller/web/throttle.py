"""A bounded table of failed tries that an attacker cannot flush, and the login's use of three.

Login (password) and the supervisor's PIN each keep a :class:`LoginThrottle`: three of these
tables, keyed by account name, by client address, and by the two together; which of them a try
waits for is said there. The table is bounded, but a locked key is
never evicted to make room: an earlier version dropped the oldest names when full, so 1,100
failures under other names unlocked a name being guessed. Here a full table first forgets keys
that are quiet and unlocked; if every key is still locked, a key it does not hold is refused
until one unlocks (fail closed, logged): the per-address table makes filling it slow.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import structlog

from drivers.backoff import ExponentialBackoff, Jitter

log = structlog.get_logger(__name__)

NEVER_LOCKED = 2**31


@dataclass(frozen=True, slots=True)
class Backoff:
    """How failures turn into waits: ``free`` failures cost nothing, then each further one
    waits ``first`` seconds doubling up to ``longest``; a key quiet for ``forget_after`` seconds
    (and not locked) starts again from nothing."""

    free: int
    first: float = 2.0
    longest: float = 300.0
    forget_after: float = 900.0
    capacity: int = 1024

    def __post_init__(self) -> None:
        self.policy  # noqa: B018 -- a bad first/longest is refused when the throttle is made

    @property
    def policy(self) -> ExponentialBackoff:
        """The project's one backoff, doubling from ``first`` to ``longest``; no jitter: a
        lockout is a promise the screen states."""
        return ExponentialBackoff(self.first, self.longest, jitter=Jitter.NONE)

    def wait_after(self, failures: int) -> float:
        """Nothing for the ``free`` failures; then the policy's wait."""
        if failures < self.free:
            return 0.0
        return self.policy.delay(failures - self.free + 1)


@dataclass(frozen=True, slots=True)
class _Strikes:
    failures: int
    until: float
    last: float


class Throttle:
    """Failures per key (a name or an address); thread-safe."""

    def __init__(self, backoff: Backoff, what: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.backoff = backoff
        self.what = what
        self._clock = clock
        self._strikes: dict[str, _Strikes] = {}
        self._lock = threading.Lock()
        self._full_logged = False

    def wait(self, key: str) -> float:
        """Seconds before ``key`` may try again (0: now)."""
        now = self._clock()
        with self._lock:
            found = self._strikes.get(key)
            if found is not None:
                return max(0.0, found.until - now)
            if len(self._strikes) < self.backoff.capacity or self._make_room(now):
                return 0.0
            return max(0.0, min(s.until for s in self._strikes.values()) - now)

    def failed(self, key: str) -> None:
        now = self._clock()
        with self._lock:
            found = self._strikes.get(key)
            if found is None and len(self._strikes) >= self.backoff.capacity \
                    and not self._make_room(now):
                return  # a key not held is refused by wait() until one unlocks
            failures = (found.failures if found else 0) + 1
            self._strikes[key] = _Strikes(failures, now + self.backoff.wait_after(failures), now)

    def succeeded(self, key: str) -> None:
        with self._lock:
            self._strikes.pop(key, None)

    def has(self, key: str) -> bool:
        """Whether ``key`` has failures on record (locked or not)."""
        with self._lock:
            return key in self._strikes

    def __len__(self) -> int:
        return len(self._strikes)

    def _make_room(self, now: float) -> bool:
        """Forget quiet unlocked keys, else the unlocked key with fewest failures; never a
        locked one. ``False`` when every key is locked."""
        quiet = [k for k, s in self._strikes.items()
                 if s.until <= now and now - s.last >= self.backoff.forget_after]
        for key in quiet:
            del self._strikes[key]
        if len(self._strikes) < self.backoff.capacity:
            return True
        unlocked = [(s.failures, s.last, k) for k, s in self._strikes.items() if s.until <= now]
        if unlocked:
            del self._strikes[min(unlocked)[2]]
            return True
        if not self._full_logged:
            self._full_logged = True
            log.warning("login throttle full: every entry locked; new keys wait",
                        table=self.what, capacity=self.backoff.capacity)
        return False


class LoginThrottle:
    """One secret's throttle (the login's password, the supervisor's PIN): per name, per
    address, and per name *at* an address, so a kiosk that many people share is not locked by
    one guesser while guessing stays slow (docs/web.md, "Login throttle").

    * A **name** waits by its own table whatever the address (``names``: its ``free``
      failures, then 2 s doubling to 5 min): guessing one account is slow from anywhere.
    * An **address** past its free failures is *hot*: from it, a name that is no account, and
      a name that has failed from this address, wait by the address's table too. A spray of
      names from one address is slowed as before.
    * From a hot address, an account that has **not** failed from it waits by its name only:
      the real dealer at a kiosk an attacker has sprayed gets in at once. Each account can so be
      guessed once per address outside the address's wait, after which it waits as well: a
      spray costs the attacker at most one try per account, never one per name.
    * Success clears the name and its pair; the address keeps its count (one good login must
      not reset the tries made from there under other names).
    """

    def __init__(self, names: Backoff, addresses: Backoff, what: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.names = Throttle(names, f"{what} names", clock)
        self.addresses = Throttle(addresses, f"{what} addresses", clock)
        self.pairs = Throttle(replace(addresses, free=NEVER_LOCKED), f"{what} names at addresses",
                              clock)
        """Only remembers which name failed where (never locked, so never refused: when full
        it forgets the quietest pair, which gives that name one more try from that address)."""

    @staticmethod
    def _pair(name: str, address: str) -> str:
        return f"{address}\n{name}"

    def wait(self, name: str, address: str, known: bool) -> float:
        """Seconds before ``name`` may try from ``address`` (0: now). ``known``: the name is an
        account that holds this kind of secret."""
        waits = [self.names.wait(name)]
        pair = self._pair(name, address)
        if not known or self.pairs.has(pair):
            waits.append(self.addresses.wait(address))
        return max(waits)

    def failed(self, name: str, address: str) -> None:
        self.names.failed(name)
        self.addresses.failed(address)
        self.pairs.failed(self._pair(name, address))

    def succeeded(self, name: str, address: str) -> None:
        self.names.succeeded(name)
        self.pairs.succeeded(self._pair(name, address))
