"""The service as systemd runs it: ``python -m controller run --config <tmp toml>`` as a
subprocess, simulated devices (``url = "sim"``: firmware_sim on real ptys), a tmp journal and a
tmp control socket, READY read from a NOTIFY_SOCKET the test binds.

Nothing sleeps to synchronise: READY is a datagram, a deal is the DealComplete event on a
``watch`` connection, an exit is ``wait(timeout)``. Every process a test starts is registered
with the ``processes`` fixture, which kills what is still running and fails the test if it had
to (a service left behind would keep its pty and socket)."""

from __future__ import annotations

import os
import shutil
import signal
import site
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from controller.service.control.client import ControlClient
from firmware_sim.scanner import ScannerShoeSim
from firmware_sim.serve import PtyServer
from firmware_sim.shuffler import ShufflerSim

ROOT = Path(__file__).resolve().parents[2]
READY_SECONDS = 60.0
EVENT_SECONDS = 60.0

GAMES: dict[str, dict[str, str]] = {
    # game -> [device] table; each dealing path of the sim mode is exercised once
    "rws-nc-three-pictures": {"kind": "shuffler"},
    "mbs-three-pictures": {"kind": "shoe", "dialect": "framed"},
    "mbs-royal-three-pictures": {"kind": "shoe", "dialect": "scanner"},
    "rws-three-card-poker": {"kind": "shuffler"},
    "live-three-pictures": {"kind": "live", "dialect": "beetek"},
}
WAGERS: dict[str, list[tuple[str, str, int]]] = {
    "rws-nc-three-pictures": [("1", "main", 500), ("2", "main", 1000), ("2", "tie", 500)],
    "mbs-three-pictures": [("1", "main", 500), ("3", "main", 500)],
    "mbs-royal-three-pictures": [("1", "main", 500), ("2", "main", 500)],
    "rws-three-card-poker": [("1", "ante", 500), ("2", "ante", 1000), ("2", "pair_plus", 500),
                             ("4", "pair_plus", 500)],
    "live-three-pictures": [("p1", "win", 500), ("p2", "lose", 500), ("p3", "win", 1000)],
}


HELD = {
    # game -> the device a test holds for it (HeldDevice): the two ways cards reach the table
    "rws-nc-three-pictures": "shuffler",
    "mbs-royal-three-pictures": "scanner",
    # a held shuffler whose round a supervisor continues: the restarted service deals it on
    "rws-three-card-poker": "shuffler",
}


def config_toml(tmp: Path, game: str, *, device: Mapping[str, str] | None = None,
                extra: str = "") -> str:
    device = device or {**GAMES[game], "url": "sim"}
    lines = [f'{k} = "{v}"' for k, v in device.items()]
    return (f'[table]\nid = "E2E-1"\ngame = "{game}"\n\n[device]\n' + "\n".join(lines)
            + f'\n\n[journal]\ndirectory = "{tmp / "journal"}"\ndurability = "money"\n'
            + extra
            + f'\n[control]\nsocket = "{tmp / "control.sock"}"\nsocket_group = ""\n'
            # not a clock test: rounds open whatever this machine's clock says
            + '\n[clock]\nunsynchronised = "allow"\n')


@dataclass
class ServiceProcess:
    """One ``tablectl run`` subprocess and its notify socket."""

    config: Path
    socket: Path
    notify: socket.socket
    process: subprocess.Popen[str]
    datagrams: list[bytes] = field(default_factory=list)

    def wait_ready(self) -> bytes:
        """The READY datagram (it carries the first STATUS)."""
        self.notify.settimeout(READY_SECONDS)
        while True:
            try:
                data = self.notify.recv(4096)
            except TimeoutError:
                raise AssertionError(f"no READY within {READY_SECONDS} s; stderr: "
                                     f"{self.stop_and_stderr()}") from None
            self.datagrams.append(data)
            if data.startswith(b"READY=1"):
                return data

    def client(self) -> ControlClient:
        return ControlClient(self.socket, timeout=EVENT_SECONDS).connect()

    def terminate(self, timeout: float = 15.0) -> tuple[int, str]:
        """SIGTERM, as systemd stops it; the exit status and stderr."""
        self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, err

    def kill(self, timeout: float = 15.0) -> tuple[int, str]:
        """SIGKILL (the OOM killer, a watchdog kill, a power cut as the process sees it): no
        handler runs, nothing is flushed or closed; the exit status and stderr."""
        self.process.send_signal(signal.SIGKILL)
        _, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, err

    def stop_and_stderr(self) -> str:
        if self.process.poll() is None:
            self.process.kill()
        _, err = self.process.communicate(timeout=15)
        return err


@dataclass(frozen=True)
class Account:
    """An unprivileged account a root test runs the service as, and a Python it may run."""

    uid: int
    """Also its gid; it gets no supplementary groups."""
    python: str
    env: dict[str, str]
    """What that Python needs to find the repo and the venv's packages."""


def _others_may_enter(path: Path) -> bool:
    """Whether an account owning nothing on the way can reach ``path`` (every directory above
    it searchable by others) and read it (and search it, for a directory)."""
    resolved = path.resolve()
    if not all(parent.stat().st_mode & stat.S_IXOTH for parent in resolved.parents):
        return False
    mode = resolved.stat().st_mode
    return bool(mode & stat.S_IROTH and mode & stat.S_IXOTH)


RUNTIME_MODULES = ("controller", "drivers", "firmware_sim", "serial", "usb", "transitions",
                   "structlog", "six")
"""What ``python -m controller run`` imports: our packages and the runtime dependencies."""


def unprivileged_account(uid: int, stage: Path) -> Account | None:
    """``uid`` with this Python when others may run it and its standard library (then its venv
    works as usual), else with the system's ``python3.X`` of the same minor version and the
    repo and the venv's packages on its path. Where those are not readable by others (a clone
    under a 0700 directory, as a fresh CI clone may be) they are copied into ``stage``, made
    readable, so the test runs wherever the repo lives. ``None`` when no such Python exists."""
    stdlib = Path(os.__file__).parent
    if _others_may_enter(Path(sys.executable)) and _others_may_enter(stdlib):
        return Account(uid, sys.executable, {"PYTHONDONTWRITEBYTECODE": "1"})
    system = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not (system.exists() and _others_may_enter(system)):
        return None
    packages = [Path(path) for path in site.getsitepackages() if Path(path).is_dir()]
    path = [ROOT, *packages]
    if not all(_others_may_enter(place) for place in path):
        path = [_stage_for_others(stage, [ROOT, *packages])]
    return Account(uid, str(system), {
        "PYTHONPATH": os.pathsep.join(map(str, path)),
        "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"})


def _stage_for_others(stage: Path, sources: list[Path]) -> Path:
    """Copy :data:`RUNTIME_MODULES` from the first of ``sources`` that has each into
    ``stage``, readable and searchable by others (0755 directories, 0644 files)."""
    stage.chmod(0o755)
    for name in RUNTIME_MODULES:
        for source in sources:
            if (source / name).is_dir():
                shutil.copytree(source / name, stage / name,
                                ignore=shutil.ignore_patterns("__pycache__"))
                break
            if (source / f"{name}.py").is_file():
                shutil.copy(source / f"{name}.py", stage / f"{name}.py")
                break
    for place in [stage, *stage.rglob("*")]:
        place.chmod(0o755 if place.is_dir() else 0o644)
    return stage


class Processes:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.started: list[subprocess.Popen[str]] = []
        self.sockets: list[socket.socket] = []

    def spawn(self, args: list[str], *, account: Account | None = None,
              **env: str) -> subprocess.Popen[str]:
        """``python -m controller ARGS``, as ``account`` when given (which needs root)."""
        python, options = sys.executable, {}
        if account is not None:
            python = account.python
            options = {"user": account.uid, "group": account.uid, "extra_groups": []}
            env = {**account.env, **env}
        process = subprocess.Popen([python, "-m", "controller", *args], cwd=ROOT,
                                   env={**os.environ, **env}, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, **options)
        self.started.append(process)
        return process

    def service(self, toml: str, name: str = "tablectl.toml", *, directory: Path | None = None,
                account: Account | None = None) -> ServiceProcess:
        """``tablectl run`` on ``toml`` written to ``directory`` (default: the test's tmp
        dir), whose control socket is ``directory/control.sock`` (as :func:`config_toml`
        puts it); as ``account`` when given."""
        directory = directory or self.tmp
        config = directory / name
        config.write_text(toml)
        if account is not None:
            os.chown(config, account.uid, account.uid)
        notify_path = self.tmp / f"notify-{len(self.sockets)}"
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        notify.bind(str(notify_path))
        self.sockets.append(notify)
        process = self.spawn(["run", "--config", str(config)], account=account,
                             NOTIFY_SOCKET=str(notify_path))
        return ServiceProcess(config, directory / "control.sock", notify, process)

    def cli(self, *args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        process = self.spawn(list(args))
        out, err = process.communicate(timeout=timeout)
        return subprocess.CompletedProcess(process.args, process.returncode, out, err)

    def close(self) -> list[str]:
        left = []
        for process in self.started:
            if process.poll() is None:
                left.append(" ".join(map(str, process.args)))
                process.kill()
            process.communicate(timeout=15)
        for sock in self.sockets:
            sock.close()
        return left


@pytest.fixture(name="processes")
def fixture_processes(tmp_path: Path) -> Iterator[Processes]:
    processes = Processes(tmp_path)
    try:
        yield processes
    finally:
        left = processes.close()
    if left:
        pytest.fail(f"test left processes running (killed): {left}", pytrace=False)


def next_watched(events: Iterator[dict[str, Any]], *types: str) -> dict[str, Any]:
    """The next watched event of one of ``types`` (the client's timeout bounds the wait)."""
    for event in events:
        if event["type"] in types:
            return event
    raise AssertionError(f"watch ended before {types}")


@dataclass
class HeldDevice:
    """A firmware_sim device that the *test* serves on a real pty, configured as the service's
    device path (a udev-like symlink): it outlives a killed service, as the table's hardware
    does, and the test acts as the dealer on it (lifts the presented hands of the shuffler,
    shuffles and draws from the shoe), so a deal stops exactly where the test stops."""

    kind: str
    """``shuffler`` (the framed shuffler) or ``scanner`` (a shoe with a barcode scanner)."""
    sim: Any
    server: PtyServer

    @property
    def name(self) -> str:
        """The device's name in the service's events and status."""
        return "shuffler" if self.kind == "shuffler" else "shoe"

    def device_config(self) -> dict[str, str]:
        """The ``[device]`` table of a config that uses this device."""
        kind = {"kind": "shuffler"} if self.kind == "shuffler" else {"kind": "shoe",
                                                                     "dialect": "scanner"}
        return {**kind, "url": str(self.server.link)}

    def close(self) -> None:
        self.server.close()
        close = getattr(self.sim, "close", None)
        if close is not None:
            close()


@pytest.fixture(name="hold_device")
def fixture_hold_device(tmp_path: Path) -> Iterator[Callable[[str], HeldDevice]]:
    """``hold_device(kind)``: a started :class:`HeldDevice`; all are closed after the test."""
    held: list[HeldDevice] = []

    def hold(kind: str) -> HeldDevice:
        sim: Any = (ShufflerSim(shuffle_seconds=0.0, dispense_seconds=0.0, take_seconds=None)
                    if kind == "shuffler" else ScannerShoeSim())
        server = PtyServer(sim, link=tmp_path / f"table-{kind}", name=kind)
        device = HeldDevice(kind, sim, server)
        held.append(device)
        server.start()
        return device

    try:
        yield hold
    finally:
        for device in held:
            device.close()
