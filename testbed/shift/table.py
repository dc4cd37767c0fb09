"""The table a shift runs at, as it runs beside a real one: three processes and a browser.

* ``python -m firmware_sim shuffler`` on a real pty: the shuffling machine. It is a process of
  its own (not the bench table's embedded simulator) because its stdin is the only way into a
  running machine from outside: ``fault SPEC`` arms the irregularity a shift meets (an exposed
  card, a jam, a wrong count), exactly as a faulty machine would produce it. The dealer lifts
  each presented hand after 0.1 s (the simulator's own ``take_seconds``).
* ``tablectl run --config`` dealing Three Card Poker (RWS-3CP) from that pty;
* ``tablectl web`` with an accounts file: a dealer, and a pit supervisor with a PIN.

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
from controller.web.auth import Role, add_account

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 60.0
"""Bound on a process's start (a second or two normally; far more on a loaded 2-core box)."""
DEALER, SUPERVISOR = "dealer1", "super1"
PASSWORDS = {DEALER: "deal-the-cards", SUPERVISOR: "pit-boss-ok"}
PIN = "472193"
"""The supervisor's PIN, typed on the dealer's screen's pad."""
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

[journal]
directory = "{journal}"
durability = "none"

[control]
socket = "{socket}"
socket_group = ""

[clock]
unsynchronised = "allow"
"""


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
        return self.workdir / "control.sock"

    @property
    def journal(self) -> Path:
        return self.workdir / "journal"

    def arm(self, irregularity: Irregularity) -> None:
        """The machine will go wrong at the next deal (``fault SPEC`` on its stdin)."""
        stdin = self.shuffler.popen.stdin
        assert stdin is not None
        try:
            stdin.write(f"fault {irregularity.value}\n".encode())
            stdin.flush()
        except OSError as error:
            raise ShiftError(f"the simulated shuffler is gone: {error}") from error

    def web_pid(self) -> int:
        return self.web.popen.pid


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
def shift_table(workdir: Path) -> Iterator[ShiftTable]:
    """Start the three processes in ``workdir`` (a short path: the socket's is at most 107
    bytes); stop them all on the way out, whatever happened."""
    accounts = workdir / "accounts"
    add_account(accounts, DEALER, Role.DEALER, PASSWORDS[DEALER])
    add_account(accounts, SUPERVISOR, Role.SUPERVISOR, PASSWORDS[SUPERVISOR], pin=PIN)
    started: list[Process] = []
    try:
        shuffler = _start([sys.executable, "-m", "firmware_sim", "shuffler", "--link",
                           str(workdir / "shuffler")], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE)
        started.append(shuffler)
        _device_path(shuffler)
        config = workdir / "table.toml"
        config.write_text(CONFIG.format(game=GAME, device=workdir / "shuffler",
                                        journal=workdir / "journal",
                                        socket=workdir / "control.sock"))
        env = {**os.environ, "XDG_STATE_HOME": str(workdir / "state")}
        service = _start([sys.executable, "-m", "controller", "run", "--config", str(config)],
                         env=env)
        started.append(service)
        if not _answers(workdir / "control.sock", service):
            raise ShiftError(f"tablectl run did not answer: {''.join(service.lines)[-800:]}")
        web = _start([sys.executable, "-m", "controller", "web", "--journal",
                      str(workdir / "journal"), "--socket", str(workdir / "control.sock"),
                      "--accounts", str(accounts), "--port", "0", "--index",
                      str(workdir / "index.sqlite")], ready_word="listening on ")
        started.append(web)
        web.said.wait(START_SECONDS)
        url = next((line.split("listening on ")[1].split()[0] for line in web.lines
                    if "listening on " in line), None)
        if url is None:
            raise ShiftError(f"tablectl web did not start: {''.join(web.lines)[-800:]}")
        yield ShiftTable(workdir, shuffler, service, web, url.rstrip("/"))
    finally:
        for process in reversed(started):
            process.stop()
