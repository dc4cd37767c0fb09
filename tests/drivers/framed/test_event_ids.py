"""Event-id order across the 65535 -> 1 wrap (docs/protocols.md 3.4)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from drivers.framed.event_ids import in_order, is_newer, next_id

ids = st.integers(min_value=1, max_value=0xFFFF)


def test_wrap_skips_zero() -> None:
    """65535 is followed by 1, never by 0."""
    assert next_id(65535) == 1 and next_id(1) == 2


def test_order_across_the_wrap() -> None:
    """1 and 2 are newer than 65535; a backlog 65534, 65535, 1, 2 is in order."""
    assert is_newer(1, 65535) and is_newer(2, 65534) and not is_newer(65535, 1)
    assert in_order([65534, 65535, 1, 2])
    assert not in_order([1, 65535])


@given(ids, st.integers(min_value=1, max_value=300))
def test_ids_raised_later_are_newer(start: int, steps: int) -> None:
    """An id reached by stepping next_id from ``start`` is newer; ``start`` is then older."""
    later = start
    for _ in range(steps):
        later = next_id(later)
    assert is_newer(later, start) and not is_newer(start, later)


def test_half_the_space_is_the_horizon() -> None:
    """32767 ids ahead is still newer; 32768 ahead reads as older (RFC 1982 style)."""
    assert is_newer(1 + 32767, 1) and not is_newer(1 + 32768, 1)


@given(ids)
def test_an_id_is_not_newer_than_itself(a: int) -> None:
    assert not is_newer(a, a)
