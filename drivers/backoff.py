"""Bounded exponential backoff with jitter: the one way the project waits before trying again
(issue 35, "one rule, one place"; STYLE.md: "bound it, back off").

:class:`ExponentialBackoff` is the policy, a frozen value: the wait after the ``n``-th failure
in a row is ``first * factor ** (n - 1)``, never more than ``cap`` (the *ceiling*), and then
jittered (:class:`Jitter`) so that many peers that failed together (every screen when the
service restarts, every device reader after a USB hub reset, every table the floor is behind
on after a broker restart) do not come back in step:

- ``EQUAL`` (the default): uniform in ``[ceiling / 2, ceiling]``; never longer than the wait
  without jitter, never shorter than half of it, so a site's bounds still hold;
- ``FULL``: uniform in ``[0, ceiling]`` (the widest spread, for a site with no lower bound);
- ``NONE``: the ceiling itself, for a site whose waits are a promise (the service's start
  backoff counted against systemd's start limit; the device operator's deterministic machine).

:class:`Retries` is one loop's count over a policy: ``failed()`` counts a failure and returns
the wait, ``reset()`` after a success starts again from ``first``. The random source is
injectable (a callable returning a float in ``[0, 1]``), so tests are deterministic.

It lives in ``drivers`` (the bytes layer) because the device readers use it and the drivers take
nothing from ``controller`` but the card vocabulary; every layer above may use it.
"""

from __future__ import annotations

import random as _random
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from drivers.errors import DriverConfigError

MAX_EXPONENT = 64
"""Growth stops counting here: ``2 ** 64`` times any first wait is past any cap, and a count of
a million failures must not build a float that overflows."""


class Jitter(str, Enum):
    """How a wait is spread below its ceiling (see the module)."""

    NONE = "none"
    EQUAL = "equal"
    FULL = "full"


@dataclass(frozen=True, slots=True)
class ExponentialBackoff:
    """``first`` seconds after the first failure, ``factor`` times more after each further one,
    at most ``cap``; jittered by ``jitter`` with ``random`` (``[0, 1]``)."""

    first: float
    cap: float
    factor: float = 2.0
    jitter: Jitter = Jitter.EQUAL
    random: Callable[[], float] = field(default=_random.random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not 0 < self.first <= self.cap:
            raise DriverConfigError(f"backoff must be (first, max) with 0 < first <= max, got "
                                    f"({self.first}, {self.cap})")
        if self.factor < 1:
            raise DriverConfigError(f"backoff factor must be at least 1, got {self.factor}")

    def ceiling(self, failures: int) -> float:
        """The wait after the ``failures``-th failure in a row (1-based; 0 counts as 1) before
        jitter: ``first``, then ``factor`` times more each time, at most ``cap``."""
        exponent = min(max(0, failures - 1), MAX_EXPONENT)
        return min(self.cap, self.first * self.factor ** exponent)

    def delay(self, failures: int) -> float:
        """The jittered wait after the ``failures``-th failure in a row: within
        ``[ceiling / 2, ceiling]`` (``EQUAL``), ``[0, ceiling]`` (``FULL``) or the ceiling."""
        ceiling = self.ceiling(failures)
        if self.jitter is Jitter.NONE:
            return ceiling
        share = min(1.0, max(0.0, self.random()))  # a bad source cannot break the bounds
        if self.jitter is Jitter.FULL:
            return ceiling * share
        return ceiling / 2 + ceiling / 2 * share

    def retries(self) -> Retries:
        """A fresh count of failures in a row over this policy."""
        return Retries(self)


@dataclass(slots=True)
class Retries:
    """Failures in a row under ``policy``: :meth:`failed` counts one and returns the wait,
    :meth:`reset` (a success) starts again from ``first``."""

    policy: ExponentialBackoff
    failures: int = 0

    def failed(self) -> float:
        """Count one more failure; the (jittered) seconds to wait before the next try."""
        self.failures += 1
        return self.policy.delay(self.failures)

    def reset(self) -> None:
        self.failures = 0
