"""Shared fixtures. The autouse ``no_leaks`` fixture fails a test that leaves a thread, a pty or a
socket behind: a leaked reader thread on the table's Pi is a slow resource leak over months."""

from __future__ import annotations

import ast
import functools
import inspect
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

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


SLOW_PATHS = ("tests/crash", "tests/feed_e2e", "tests/floor_scale", "tests/service_e2e",
              "tests/systemd", "tests/drivers/conformance",
              "tests/controller/cli/test_conformance.py",
              "tests/controller/service/test_journal_background.py",
              "tests/controller/service/test_protection_count.py")
"""Folders and files whose every test is ``slow``: the SIGKILL campaign, the feed and the floor
against a real Mosquitto and PostgreSQL, the service as a process, ``systemd-analyze`` on the
units, the conformance kit's timed campaigns (every scenario of a device over a real pty, with
the document's timings), the journal's background checker (a process at nice 19), and the
protection count campaign (the whole wired service on a pty dealing 52 decks a game, 10 s a
test: half the quick run's longest tests)."""
SLOW_FIXTURES = frozenset({
    ("tests.service_e2e.conftest", "processes"),
    ("tests.service_e2e.conftest", "hold_device"),
    ("tests.web.conftest", "service"),
    ("tests.web.conftest", "web"),
    ("tests.web.conftest", "browser"),
    ("tests.web.test_touch_order", "table"),
    ("tests.web.test_touch_reconstruct", "table"),
})
"""Fixtures (defining module, name) that start a process, a browser or a broker through a
helper of their own: a test that uses one, even through another fixture (the studio's gateway
runs on ``processes``), is ``slow``."""
SPAWNS = re.compile(r"\bsubprocess\.|\bPopen\(|\bsys\.executable\b")
"""What a test or a fixture that starts a process says in its own source."""


@functools.cache
def _definitions(filename: str) -> dict[int, tuple[str, frozenset[str]]]:
    """The functions and classes of a source file by first line: (their source, the plain
    names they call). Parsed once per file."""
    try:
        text = Path(filename).read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return {}
    lines = text.splitlines()
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            called = frozenset(inner.func.id for inner in ast.walk(node)
                               if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name))
            found[first] = ("\n".join(lines[first - 1:node.end_lineno]), called)
            found.setdefault(node.lineno, found[first])
    return found


def _spawns(thing: object, depth: int = 2) -> bool:
    """Whether a test's function, fixture or helper (``thing``) starts a process
    (:data:`SPAWNS`) in its own source or, ``depth`` calls down, in a function or class of
    ``tests`` it calls by name (``_run(...)``, ``Running(...)``)."""
    function = inspect.unwrap(thing) if callable(thing) else thing  # type: ignore[arg-type]
    code = getattr(function, "__code__", None)
    if code is not None:
        filename, first = code.co_filename, code.co_firstlineno
        names = function.__globals__
    elif inspect.isclass(function):
        module = inspect.getmodule(function)
        filename = getattr(module, "__file__", None) or ""
        first = next((line for line, (text, _) in _definitions(filename).items()
                      if text.lstrip().startswith(f"class {function.__name__}")), 0)
        names = vars(module) if module else {}
    else:
        return False
    found = _definitions(filename).get(first)
    if found is None:
        return False
    text, called = found
    if SPAWNS.search(text):
        return True
    return depth > 0 and any(
        _spawns(names[name], depth - 1) for name in sorted(called)
        if name in names and getattr(names[name], "__module__", "").startswith("tests")
        and (inspect.isfunction(names[name]) or inspect.isclass(names[name])))


def _slow(item: pytest.Item) -> bool:
    """Whether ``item`` starts a process, a browser or a broker: by its folder, by a fixture of
    :data:`SLOW_FIXTURES`, or because the test or one of its fixtures starts a process in its
    own source. So a new test is marked without anyone remembering to."""
    where = item.path.relative_to(item.config.rootpath).as_posix()
    if any(where == path or where.startswith(path + "/") for path in SLOW_PATHS):
        return True
    function = getattr(item, "function", None)
    if function is not None and _spawns(function):
        return True
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    for name in item.fixturenames:  # type: ignore[attr-defined]
        definitions = info.name2fixturedefs.get(name) or ()
        if not definitions:
            continue
        fixture = definitions[-1].func
        if (getattr(fixture, "__module__", ""), name) in SLOW_FIXTURES or _spawns(fixture):
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the process, browser and broker tests ``slow`` (issue 35), so that
    ``pytest -m "not slow"`` is the quick run while working, and CI runs everything."""
    del config
    for item in items:
        if _slow(item):
            item.add_marker(pytest.mark.slow)


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
