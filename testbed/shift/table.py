"""The table a shift runs at, as it runs beside a real one: three processes and a browser.

* ``python -m firmware_sim shuffler`` on a real pty: the shuffling machine. It is a process of
  its own (not the bench table's embedded simulator) because its stdin is the only way into a
  running machine from outside: ``fault SPEC`` arms the irregularity a shift meets (an exposed
  card, a jam, a wrong count), exactly as a faulty machine would produce it. The dealer lifts
  each presented hand after 0.1 s (the simulator's own ``take_seconds``).
* ``tablectl run --config`` dealing Three Card Poker (RWS-3CP) from that pty;
* ``tablectl web`` with an accounts file: a dealer with a PIN (the kiosk's login by taps), and
  a pit supervisor with a PIN.

Started the way ``tests/web/conftest.py`` starts them: a process is ready when it has said so
(the simulator prints ``PTY path``, the socket answers ``round.status``, the web process prints
``listening on URL``); every wait has a deadline; nothing sleeps to synchronise.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import IO

from controller.service.control.client import ControlClient
from controller.service.policy import Unsynchronised
from controller.web.auth import Role, add_account

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 60.0
"""Bound on a process's start (a second or two normally; far more on a loaded 2-core box)."""
DEALER, SUPERVISOR = "dealer1", "super1"
PASSWORDS = {DEALER: "deal-the-cards", SUPERVISOR: "pit-boss-ok"}
PIN = "472193"
"""The supervisor's PIN, typed on the dealer's screen's pad."""
DEALER_PIN = "305817"
"""The dealer's PIN, typed on the login page's pad at the kiosk."""
GAME = "rws-three-card-poker"
CONFIG = """[table]
id = "SHIFT-1"
game = "{game}"

[device]
kind = "shuffler"
url = "{device}"

[limits.ante]
min = 500
max = 50000

[limits.pair_plus]
min = 500
max = 10000

"""
SERVICE_SECTIONS = """[journal]
directory = "{journal}"
durability = "none"

[control]
socket = "{socket}"
socket_group = ""

[clock]
unsynchronised = "{unsynchronised}"
max_error_ms = {max_error_ms}
"""
"""A test table's config after its ``[table]``, ``[device]`` and ``[limits]``: the journal
without fsync, the control socket without a group, and the clock's policy."""
CONFIG += SERVICE_SECTIONS


class ShiftError(Exception):
    """The shift could not be run, or what it left in the journal is wrong."""


class Irregularity(str, Enum):
    """What the simulated shuffler is told to go wrong with (its stdin ``fault SPEC``); each
    fires at the round's deal, so it is armed before the round opens."""

    EXPOSED_CARD = "exposed"
    """A card of the next hand face up: the round holds for a supervisor (RWS-3CP has no
    clause for it: the house's supervisor decides); the supervisor continues it."""
    JAM = "jamhand"
    """The next hand jams while it is formed: the round holds; the supervisor clears the
    machine's fault, then continues the round."""
    WRONG_COUNT = "count:51"
    """The next shuffle counts 51 cards: the round is void (RWS-3CP 5.1.3, every wager
    returned); the supervisor clears the machine's fault, the dealer counts the deck."""


@dataclass
class Process:
    """A child process and the lines of its stderr (drained on a thread so it never blocks)."""

    popen: subprocess.Popen[bytes]
    lines: list[str]
    reader: threading.Thread
    said: threading.Event

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=5)
        self.reader.join(timeout=5)
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
                stream.close()


def _start(argv: list[str], *, env: dict[str, str] | None = None, stdin: int | None = None,
           stdout: int | None = subprocess.DEVNULL, ready_word: str | None = None) -> Process:
    popen = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=stdin, stdout=stdout,
                             stderr=subprocess.PIPE)
    lines: list[str] = []
    said = threading.Event()

    def drain(stream: IO[bytes]) -> None:
        for raw in stream:
            line = raw.decode("utf-8", "replace")
            lines.append(line)
            if ready_word is not None and ready_word in line:
                said.set()
        said.set()

    assert popen.stderr is not None
    reader = threading.Thread(target=drain, args=(popen.stderr,), name=f"shift-{argv[3]}")
    reader.start()
    return Process(popen, lines, reader, said)


@dataclass
class ShiftTable:
    """The running table: the simulated shuffler's stdin, the control socket (read only by
    this harness: the shift itself is run from the screen), the journal and the web's URL."""

    workdir: Path
    shuffler: Process
    service: Process
    web: Process
    url: str

    @property
    def socket(self) -> Path:
        return self.workdir / "shuffler.sock"

    @property
    def journal(self) -> Path:
        return self.workdir / "journal"

    def arm(self, irregularity: Irregularity) -> None:
        """The machine will go wrong at the next deal (``fault SPEC`` on its stdin)."""
        tell(self.shuffler, f"fault {irregularity.value}")

    def web_pid(self) -> int:
        return self.web.popen.pid


def tell(machine: Process, line: str) -> None:
    """A line on a simulated machine's stdin (``fault SPEC``, ``draw``), as a faulty machine
    or the dealer's hand would make it happen."""
    stdin = machine.popen.stdin
    assert stdin is not None
    try:
        stdin.write(f"{line}\n".encode())
        stdin.flush()
    except OSError as error:
        raise ShiftError(f"the simulated machine is gone: {error}") from error


def _device_path(shuffler: Process) -> str:
    """The pty the simulator serves (its first stdout line, ``PTY /dev/pts/N``)."""
    stdout = shuffler.popen.stdout
    assert stdout is not None
    found: list[str] = []

    def first_line() -> None:
        found.append(stdout.readline().decode("utf-8", "replace"))

    reader = threading.Thread(target=first_line, name="shift-pty-line")
    reader.start()
    reader.join(START_SECONDS)
    if not found or not found[0].startswith("PTY "):
        raise ShiftError(f"firmware_sim did not start: {''.join(shuffler.lines)[-800:]}")
    return found[0].split()[1]


def _answers(socket_path: Path, process: Process) -> bool:
    """Bounded wait for the service's socket to answer a read."""
    done = threading.Event()
    ok: list[bool] = []

    def probe() -> None:
        while not done.is_set() and process.popen.poll() is None:
            try:
                with ControlClient(socket_path, timeout=2.0) as client:
                    client.request("round.status")
                ok.append(True)
                break
            except Exception:  # noqa: BLE001 (not up yet: again until the deadline)
                done.wait(0.2)
        done.set()

    thread = threading.Thread(target=probe, name="shift-wait-service")
    thread.start()
    done.wait(START_SECONDS)
    done.set()
    thread.join(timeout=10)
    return bool(ok)


@contextmanager
def device_table(workdir: Path, device: str, simulator: tuple[str, ...], config: str
                 ) -> Iterator[tuple[Process, Process]]:
    """``python -m firmware_sim DEVICE *simulator --link WORKDIR/DEVICE`` on a real pty (its
    stdin open for :func:`tell`) and ``tablectl run --config`` with ``config`` (already naming
    that link and its socket ``WORKDIR/DEVICE.sock``): the machine and the service, both
    stopped on the way out, whatever happened."""
    started: list[Process] = []
    try:
        machine = _start([sys.executable, "-m", "firmware_sim", device, *simulator, "--link",
                          str(workdir / device)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        started.append(machine)
        _device_path(machine)
        path = workdir / f"{device}.toml"
        path.write_text(config)
        env = {**os.environ, "XDG_STATE_HOME": str(workdir / "state")}
        service = _start([sys.executable, "-m", "controller", "run", "--config", str(path)],
                         env=env)
        started.append(service)
        if not _answers(workdir / f"{device}.sock", service):
            raise ShiftError(f"tablectl run did not answer: {''.join(service.lines)[-800:]}")
        yield machine, service
    finally:
        for process in reversed(started):
            process.stop()


@contextmanager
def web_process(workdir: Path, journal: Path, socket: Path, accounts: Path
                ) -> Iterator[tuple[str, Process]]:
    """``tablectl web`` on a free port for that table: its URL and process; stopped on the
    way out."""
    web = _start([sys.executable, "-m", "controller", "web", "--journal", str(journal),
                  "--socket", str(socket), "--accounts", str(accounts), "--port", "0",
                  "--index", str(workdir / f"index-{socket.stem}.sqlite")],
                 ready_word="listening on ")
    try:
        web.said.wait(START_SECONDS)
        url = next((line.split("listening on ")[1].split()[0] for line in web.lines
                    if "listening on " in line), None)
        if url is None:
            raise ShiftError(f"tablectl web did not start: {''.join(web.lines)[-800:]}")
        yield url.rstrip("/"), web
    finally:
        web.stop()


def shift_accounts(path: Path) -> Path:
    """The shift's people: the dealer (a password, and a PIN for the kiosk's picker and pad)
    and the supervisor (a password and a PIN)."""
    add_account(path, DEALER, Role.DEALER, PASSWORDS[DEALER], pin=DEALER_PIN)
    add_account(path, SUPERVISOR, Role.SUPERVISOR, PASSWORDS[SUPERVISOR], pin=PIN)
    return path


@contextmanager
def shift_table(workdir: Path, unsynchronised: Unsynchronised = Unsynchronised.ALLOW,
                max_error_ms: int = 100) -> Iterator[ShiftTable]:
    """Start the three processes in ``workdir`` (a short path: the socket's is at most 107
    bytes); stop them all on the way out, whatever happened. ``unsynchronised`` and
    ``max_error_ms`` are the table's ``[clock]``: the bench's shift allows rounds on any clock;
    a cold start refuses them (and a 1 ms bound distrusts even a synchronised test machine's
    clock) until a supervisor overrides."""
    accounts = shift_accounts(workdir / "accounts")
    socket, journal = workdir / "shuffler.sock", workdir / "journal"
    config = CONFIG.format(game=GAME, device=workdir / "shuffler", journal=journal,
                           socket=socket, unsynchronised=unsynchronised.value,
                           max_error_ms=max_error_ms)
    with device_table(workdir, "shuffler", (), config) as (shuffler, service), \
            web_process(workdir, journal, socket, accounts) as (url, web):
        yield ShiftTable(workdir, shuffler, service, web, url)
