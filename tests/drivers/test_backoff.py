"""The one backoff helper (drivers.backoff, issue 35): bounded exponential growth, a cap, jitter
within its range from an injectable random source, and a count that a success resets."""

from __future__ import annotations

import itertools

import pytest

from drivers.backoff import MAX_EXPONENT, ExponentialBackoff, Jitter, Retries
from drivers.errors import DriverConfigError


def _source(*values: float):
    cycle = itertools.cycle(values)
    return lambda: next(cycle)


def test_the_ceiling_doubles_from_first_up_to_the_cap() -> None:
    """first, 2x, 4x ... never past the cap; a count of 0 is the first wait."""
    policy = ExponentialBackoff(0.1, 2.0, jitter=Jitter.NONE)
    assert [policy.delay(n) for n in range(0, 8)] == pytest.approx(
        [0.1, 0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0])
    assert ExponentialBackoff(1.0, 100.0, factor=3.0, jitter=Jitter.NONE).ceiling(4) == 27.0


def test_growth_is_bounded_for_any_count() -> None:
    """A million failures in a row is the cap, not an overflow."""
    policy = ExponentialBackoff(0.5, 30.0, factor=10.0)
    for failures in (MAX_EXPONENT, MAX_EXPONENT + 1, 10**6):
        assert policy.ceiling(failures) == 30.0
        assert 15.0 <= policy.delay(failures) <= 30.0


@pytest.mark.parametrize("jitter, low, high", [(Jitter.EQUAL, 0.5, 1.0), (Jitter.FULL, 0.0, 1.0),
                                               (Jitter.NONE, 1.0, 1.0)])
def test_jitter_stays_within_its_range(jitter: Jitter, low: float, high: float) -> None:
    """Equal jitter spreads a wait over [ceiling / 2, ceiling], full over [0, ceiling]; the
    random source's ends map to the range's ends, and a source outside [0, 1] cannot break
    the bounds."""
    for failures in range(1, 10):
        ceiling = ExponentialBackoff(0.1, 2.0).ceiling(failures)
        bottom = ExponentialBackoff(0.1, 2.0, jitter=jitter, random=lambda: 0.0)
        top = ExponentialBackoff(0.1, 2.0, jitter=jitter, random=lambda: 1.0)
        assert bottom.delay(failures) == pytest.approx(low * ceiling)
        assert top.delay(failures) == pytest.approx(high * ceiling)
        wild = ExponentialBackoff(0.1, 2.0, jitter=jitter, random=_source(-5.0, 7.0, 0.25))
        for _ in range(3):
            assert low * ceiling <= wild.delay(failures) <= high * ceiling


def test_jitter_spreads_the_waits() -> None:
    """With the real random source the waits of one count differ (peers fall out of step)."""
    policy = ExponentialBackoff(1.0, 8.0)
    waits = {policy.delay(4) for _ in range(50)}
    assert len(waits) > 1 and all(4.0 <= wait <= 8.0 for wait in waits)


def test_retries_count_failures_and_a_success_resets() -> None:
    """``failed()`` counts a failure and returns the wait after it; ``reset()`` starts again
    from the first wait."""
    retries = ExponentialBackoff(1.0, 4.0, random=lambda: 1.0).retries()
    assert isinstance(retries, Retries)
    assert [retries.failed() for _ in range(4)] == [1.0, 2.0, 4.0, 4.0]
    assert retries.failures == 4
    retries.reset()
    assert retries.failures == 0 and retries.failed() == 1.0


@pytest.mark.parametrize("first, cap, factor", [(0.0, 1.0, 2.0), (2.0, 1.0, 2.0),
                                                (-1.0, 1.0, 2.0), (0.1, 1.0, 0.5)])
def test_a_policy_that_cannot_hold_is_refused(first: float, cap: float, factor: float) -> None:
    """No wait of zero or less, no first past the cap, no shrinking growth."""
    with pytest.raises(DriverConfigError):
        ExponentialBackoff(first, cap, factor=factor)
