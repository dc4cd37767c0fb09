"""The service's heap housekeeping (issue 27): one glibc arena, a rate-limited trim, start-up's
objects frozen once."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from controller import heap

ROOT = Path(__file__).resolve().parents[2]

COUNT_THREAD_ARENAS = textwrap.dedent("""
    import sys, threading
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from controller import heap
    if sys.argv[1] == "tuned":
        assert heap.tune_for_service() is heap.HeapTuning.APPLIED
    def allocate():
        kept = [bytearray(1000) for _ in range(2000)]
        barrier.wait()
    barrier = threading.Barrier(4)
    threads = [threading.Thread(target=allocate) for _ in range(3)]
    for thread in threads:
        thread.start()
    barrier.wait()
    # glibc maps each arena of a thread at a multiple of its 64 MiB heap size (HEAP_MAX_SIZE)
    arenas = 0
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split()
        start = int(fields[0].split("-")[0], 16)
        if len(fields) == 5 and "rw" in fields[1] and start % (64 << 20) == 0:
            arenas += 1
    for thread in threads:
        thread.join()
    print(arenas)
""")


def _thread_arenas(mode: str) -> int:
    script = COUNT_THREAD_ARENAS.format(root=str(ROOT))
    done = subprocess.run([sys.executable, "-c", script, mode], capture_output=True, text=True,
                          timeout=120, check=True)
    return int(done.stdout)


def test_tuning_keeps_every_thread_in_the_one_arena() -> None:
    """Three threads that allocate get arenas of their own by default, none once the service's
    tuning ran before they started: their freed memory is one heap's, not four."""
    if heap._glibc_function("mallopt") is None:
        pytest.skip("not glibc")
    assert _thread_arenas("default") >= 1
    assert _thread_arenas("tuned") == 0


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_housekeeper_trims_at_most_once_an_interval_and_only_when_worth_it() -> None:
    """Called often (a loop that woke early), it works at most once each ``interval``; it trims
    only when the heap holds at least ``threshold`` free bytes."""
    clock, free, trims = _Clock(), [5 << 20], []
    keeper = heap.Housekeeper(interval=30.0, threshold=1 << 20, clock=clock,
                              free_bytes=lambda: free[0],
                              trim=lambda: trims.append(clock.now) or True)
    try:
        first = keeper.run()
        assert first is not None and first.trimmed and first.froze
        clock.now += 29.9
        assert keeper.run() is None and trims == [1000.0]
        clock.now += 0.1
        second = keeper.run()
        assert second is not None and second.trimmed and not second.froze
        free[0] = (1 << 20) - 1
        clock.now += 30.0
        third = keeper.run()
        assert third is not None and not third.trimmed and third.free_bytes == (1 << 20) - 1
        assert trims == [1000.0, 1030.0] and keeper.trims == 2
    finally:
        gc.unfreeze()


def test_housekeeper_freezes_start_up_objects_once() -> None:
    """The first run moves the objects alive then out of the collector's generations; later
    runs do not freeze what the rounds made since."""
    clock = _Clock()
    keeper = heap.Housekeeper(interval=1.0, clock=clock, free_bytes=lambda: None,
                              trim=lambda: pytest.fail("no trim without glibc's figures"))
    try:
        before = gc.get_freeze_count()
        assert keeper.run() == heap.HousekeepingResult(True, False, None)
        frozen = gc.get_freeze_count()
        assert frozen > before
        kept = [[object()] for _ in range(1000)]
        clock.now += 1.0
        assert keeper.run() == heap.HousekeepingResult(False, False, None)
        assert gc.get_freeze_count() == frozen and kept
    finally:
        gc.unfreeze()


TRIM_GIVES_BACK = textwrap.dedent("""
    import sys
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from controller import heap
    def rss_kb():
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    blocks = [bytearray(1000) for _ in range(30000)]  # 30 MB of the heap, below mmap's floor
    blocks = blocks[::10]  # keep every tenth: holes of whole pages the top trim cannot free
    free = heap.heap_free_bytes()
    before = rss_kb()
    trimmed = heap.malloc_trim()
    print(free, before - rss_kb(), trimmed, len(blocks))
""")


def test_a_trim_gives_free_pages_below_live_blocks_back() -> None:
    """The heap's free bytes are glibc's own figure, and ``malloc_trim`` hands back the pages
    of holes that the top-of-heap trim glibc does by itself leaves resident."""
    if heap._glibc_function("mallinfo2") is None:
        pytest.skip("no mallinfo2 (glibc before 2.33, or not glibc)")
    done = subprocess.run([sys.executable, "-c", TRIM_GIVES_BACK.format(root=str(ROOT))],
                          capture_output=True, text=True, timeout=120, check=True)
    free, released_kb, trimmed, kept = done.stdout.split()
    assert int(free) > 20 << 20 and trimmed == "True" and kept == "3000"
    assert int(released_kb) > 8_000, done.stdout  # 13.6 MB here
