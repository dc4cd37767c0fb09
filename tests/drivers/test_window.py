"""The bounded window behind event deduplication (link) and resend recognition (journal)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.window import RecentWindow


@given(st.lists(st.integers(0, 20)), st.integers(1, 8))
def test_holds_the_last_distinct_members(added: list[int], size: int) -> None:
    """Whatever is added, the window holds exactly the last ``size`` distinct members in the
    order they first entered; a repeat does not refresh a member (it is the same event)."""
    window: RecentWindow[int] = RecentWindow(size)
    model: list[int] = []
    for member in added:
        window.add(member)
        if member not in model:
            model.append(member)
            del model[:-size]
    assert list(window) == model
    assert all(member in window for member in model)
    assert not any(member in window for member in set(added) - set(model))


def test_discard_and_clear() -> None:
    """A discarded member can enter again (a redelivered event); clear empties it (a reboot)."""
    window: RecentWindow[str] = RecentWindow(3, ["a", "b", "c"])
    window.discard("b")
    window.discard("zz")
    assert list(window) == ["a", "c"] and "b" not in window
    window.add("b")
    window.add("d")
    assert list(window) == ["c", "b", "d"]
    window.clear()
    assert len(window) == 0 and "c" not in window


def test_size_must_be_positive() -> None:
    """A window of no size would silently drop every member: refused at construction."""
    with pytest.raises(ValueError, match="positive size"):
        RecentWindow(0)
