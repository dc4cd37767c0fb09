"""Shared fixtures. The autouse ``no_leaks`` fixture fails a test that leaves a thread, a pty or a
socket behind: a leaked reader thread on the table's Pi is a slow resource leak over months."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest
import structlog
from hypothesis import HealthCheck, settings

LEAK_GRACE_SECONDS = 15.0  # only spent when something is still finishing: generous under load

# Hypothesis fails an example that takes over 200 ms by default, and a run whose examples take
# long to generate (health check ``too_slow``): on a busy 2-core machine (CI beside other work)
# a property that is right fails on time alone. Speed is measured in benchmarks/, never asserted
# by a test; the examples' count and size stay as each test sets.
settings.register_profile("tablectl", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("tablectl")


def _open_ptys_and_sockets() -> set[str]:
    """Descriptors of this process that point at a pty or a socket, as ``fd -> target``."""
    found: set[str] = set()
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return found
    for name in names:
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if target.startswith("socket:") or target.startswith("/dev/pts/") or target == "/dev/ptmx":
            found.add(f"{name}->{target}")
    return found


def _live_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.is_alive() and t is not threading.main_thread()}


@pytest.fixture(autouse=True)
def no_leaks() -> Iterator[None]:
    threads_before = _live_threads()
    fds_before = _open_ptys_and_sockets()
    yield
    deadline = time.monotonic() + LEAK_GRACE_SECONDS
    while True:
        leaked_threads = _live_threads() - threads_before
        leaked_fds = _open_ptys_and_sockets() - fds_before
        if not (leaked_threads or leaked_fds) or time.monotonic() > deadline:
            break
        for thread in leaked_threads:
            thread.join(timeout=0.05)
        if not leaked_threads:
            time.sleep(0.02)  # descriptors closed by a finishing thread: poll, bounded
    problems = []
    if leaked_threads:
        problems.append("threads: " + ", ".join(sorted(t.name for t in leaked_threads)))
    if leaked_fds:
        problems.append("ptys/sockets: " + ", ".join(sorted(leaked_fds)))
    if problems:
        pytest.fail("test left resources behind: " + "; ".join(problems), pytrace=False)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Real devices: the same driver contract tests run against hardware when a URL is given
    (``pytest --shuffler-url /dev/table-shuffler``), and are skipped otherwise."""
    parser.addoption("--shuffler-url", default=None, help="URL of a real shuffler (framed protocol)")
    parser.addoption("--shoe-url", default=None, help="URL of a real framed-protocol shoe")


@pytest.fixture(name="structlog_uncached", autouse=True)
def structlog_uncached_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts from structlog's defaults (every level, nothing cached), as when it runs
    alone: a test that runs ``tablectl`` in-process configures structlog as the program does
    (WARNING and up, loggers cached on first use), and a later test's ``capture_logs`` then saw
    nothing (the suite's order decided whether a log test passed). Inside a test the program's
    configuration applies, but never the cache."""
    structlog.reset_defaults()
    configure = structlog.configure

    def uncached(**settings_: object) -> None:
        configure(**{**settings_, "cache_logger_on_first_use": False})

    monkeypatch.setattr(structlog, "configure", uncached)
    yield
    structlog.reset_defaults()
