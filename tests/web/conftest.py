"""The web process as it runs beside a table: ``tablectl run`` (the embedded bench table, a
simulated shuffler on a real pty) and ``tablectl web`` as subprocesses, and Debian's Chromium
driven by Playwright (never a browser download: ``executable_path=/usr/bin/chromium``).

Module-scoped, so one service, one web process and one browser serve a file's tests; each test
opens its own round. Nothing sleeps: a process is ready when it has said so (the socket exists
after READY; the web process prints ``listening on URL``), waits have deadlines.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from controller.service.control.client import ControlClient
from controller.web.auth import Role, add_account
from testbed.shift.screen import CHROMIUM, chromium
from tests.waiting import WaitTimeout, wait_until

START_SECONDS = 20.0
PASSWORDS = {"dealer1": "deal-the-cards", "surv1": "watch-the-table", "super1": "pit-boss-ok"}
PINS = {"super1": "472193"}
"""A supervisor's PIN, typed at the dealer's screen to answer a hold there."""


@dataclass
class Service:
    socket: Path
    journal: Path
    process: subprocess.Popen[bytes]

    def client(self) -> ControlClient:
        return ControlClient(self.socket, timeout=60.0)

    def call(self, verb: str, args: dict[str, object] | None = None, actor: str | None = None
             ) -> dict[str, object]:
        with self.client() as client:
            return client.request(verb, args, actor=actor)


@dataclass
class Web:
    url: str
    process: subprocess.Popen[bytes]
    lines: list[str]


def close_and_deal(service: Service) -> None:
    """No more bets, then wait (on a ``watch`` connection, bounded by its timeout) for the
    simulated shuffler's deal to complete."""
    with service.client() as watcher:
        events = watcher.watch()
        service.call("round.close")
        for event in events:
            if event.get("type") == "DealComplete":
                return


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@pytest.fixture(name="workdir", scope="module")
def workdir_fixture() -> Iterator[Path]:
    """A short path (a Unix socket path is at most 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="tw", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(name="service", scope="module")
def service_fixture(workdir: Path) -> Iterator[Service]:
    """``tablectl run`` without a config: the bench table (RWS-3CP, simulated shuffler)."""
    runtime = workdir / "run"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "XDG_STATE_HOME": str(workdir / "state"),
           "XDG_RUNTIME_DIR": str(runtime)}
    socket_path = runtime / "tablectl" / "control.sock"
    process = subprocess.Popen([sys.executable, "-m", "controller", "run"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ready = _answers_status(socket_path, process)
    if not ready:
        _stop(process)
        pytest.fail(f"tablectl run did not answer: {process.stderr.read()[-2000:]!r}"
                    if process.stderr else "tablectl run did not answer")
    try:
        yield Service(socket_path, workdir / "state" / "tablectl" / "bench-journal", process)
    finally:
        _stop(process)
        if process.stderr:
            process.stderr.close()


def _answers_status(socket_path: Path, process: subprocess.Popen[bytes]) -> bool:
    """Whether the service came up: its socket answers ``round.status`` before the process
    ends (:func:`tests.waiting.wait_until`, each try bounded by the client's timeout)."""
    def answered_or_ended() -> str:
        if process.poll() is not None:
            return "ended"
        try:
            with ControlClient(socket_path, timeout=1.0) as client:
                client.request("round.status")
        except Exception:  # noqa: BLE001 (not up yet: asked again until the bound)
            return ""
        return "answered"

    try:
        return wait_until(answered_or_ended, "the service answers round.status") == "answered"
    except WaitTimeout:
        return False


@pytest.fixture(name="accounts", scope="module")
def accounts_fixture(workdir: Path) -> Path:
    path = workdir / "accounts"
    add_account(path, "dealer1", Role.DEALER, PASSWORDS["dealer1"])
    add_account(path, "surv1", Role.SURVEILLANCE, PASSWORDS["surv1"])
    add_account(path, "super1", Role.SUPERVISOR, PASSWORDS["super1"], pin=PINS["super1"])
    return path


@pytest.fixture(name="web", scope="module")
def web_fixture(workdir: Path, service: Service, accounts: Path) -> Iterator[Web]:
    process = subprocess.Popen(
        [sys.executable, "-m", "controller", "web", "--journal", str(service.journal),
         "--socket", str(service.socket), "--accounts", str(accounts), "--port", "0",
         "--index", str(workdir / "index.sqlite")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=False)
    lines: list[str] = []
    found = threading.Event()

    def drain() -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            line = raw.decode("utf-8", "replace")
            lines.append(line)
            if "listening on " in line:
                found.set()
        found.set()

    reader = threading.Thread(target=drain, name="web-stderr")
    reader.start()
    found.wait(START_SECONDS)
    url = next((line.split("listening on ")[1].split()[0] for line in lines
                if "listening on " in line), None)
    try:
        if url is None:
            pytest.fail(f"tablectl web did not start: {''.join(lines)[-2000:]}")
        yield Web(url.rstrip("/"), process, lines)
    finally:
        _stop(process)
        reader.join(timeout=5)
        if process.stderr:
            process.stderr.close()


@pytest.fixture(name="browser", scope="module")
def browser_fixture() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} missing: .ci/run installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    with chromium() as browser:
        yield browser


@pytest.fixture(name="no_leaks", autouse=True)
def no_leaks_fixture() -> Iterator[None]:
    """The suite's leak check, less the Playwright driver's own asyncio executor threads
    (``asyncio_N``), which live as long as the module's browser and are stopped with it."""
    from tests.conftest import _live_threads, _open_ptys_and_sockets

    def threads() -> set[str]:
        return {t.name for t in _live_threads() if not t.name.startswith("asyncio_")}

    before_threads, before_fds = threads(), _open_ptys_and_sockets()
    yield
    done = threading.Event()
    for _ in range(40):  # bounded: 2 s for a finishing thread to end, as the suite's check
        if not (threads() - before_threads or _open_ptys_and_sockets() - before_fds):
            break
        done.wait(0.05)
    leaked = sorted(threads() - before_threads) + sorted(_open_ptys_and_sockets() - before_fds)
    if leaked:
        pytest.fail("test left resources behind: " + ", ".join(leaked), pytrace=False)
