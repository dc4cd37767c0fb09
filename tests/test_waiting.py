"""The shared wait helper (:mod:`tests.waiting`): it returns as soon as the condition holds,
and a wait that runs out names what was awaited and the last value seen. The waits that run
out here wait for something that never comes, so their short bound is the point, not a race."""

from __future__ import annotations

import queue
import threading

import pytest

from tests.waiting import WaitTimeout, pauses, wait_for, wait_until

NEVER_S = 0.05
"""The bound of a wait for something that never comes."""


def test_wait_until_returns_the_value_once_it_holds() -> None:
    """The probe's value is returned once ``check`` passes it, and the probe is not called
    again after that."""
    values = iter([0, 0, 3, 4])
    calls: list[int] = []

    def probe() -> int:
        calls.append(1)
        return next(values)

    assert wait_until(probe, "three", check=lambda value: value >= 3) == 3
    assert len(calls) == 3


def test_wait_until_sees_another_threads_change() -> None:
    """A change made by another thread ends the wait."""
    seen: list[str] = []
    changer = threading.Timer(0.02, seen.append, args=("done",))
    changer.start()
    try:
        assert wait_until(lambda: seen, "the other thread's change") == ["done"]
    finally:
        changer.join()


def test_a_wait_that_runs_out_names_what_and_the_last_value() -> None:
    """The failure says what was awaited, the bound and the last value the probe gave; it is an
    AssertionError, so pytest reports it as the test's failure."""
    with pytest.raises(WaitTimeout) as failed:
        wait_until(lambda: {"state": "betting"}, "the round settled", timeout=NEVER_S,
                   check=lambda status: status["state"] == "settled")
    message = str(failed.value)
    assert "the round settled" in message and "'betting'" in message
    assert isinstance(failed.value, AssertionError)
    assert failed.value.last == {"state": "betting"}


def test_pauses_start_short_and_back_off_to_a_bound() -> None:
    """Polling starts at a millisecond and doubles up to a tenth of a second."""
    next_pause = pauses()
    taken = [next_pause() for _ in range(10)]
    assert taken[0] == pytest.approx(0.001)
    assert taken == sorted(taken) and taken[-1] == pytest.approx(0.1)


def test_wait_for_takes_the_next_matching_item_and_keeps_the_others() -> None:
    """By type or by predicate; the items taken on the way go to ``seen``."""
    items: queue.Queue[object] = queue.Queue()
    for item in ("a", 1, "b", 2.5):
        items.put(item)
    seen: list[object] = []
    assert wait_for(items, int, seen=seen) == 1
    assert seen == ["a"]
    assert wait_for(items, lambda item: item == 2.5, "two and a half", seen=seen) == 2.5
    assert seen == ["a", "b"]


def test_wait_for_runs_out_naming_the_kind_and_the_last_item() -> None:
    """Nothing matching arrives: the failure names the awaited type and the last item taken."""
    items: queue.Queue[object] = queue.Queue()
    items.put("not it")
    with pytest.raises(WaitTimeout, match=r"a int .*'not it'"):
        wait_for(items, int, timeout=NEVER_S)
