"""Fixtures of the floor page's tests: bench journals, a floor database filled through the
floor's own apply path (:mod:`.floordb`), and ``tablectl floor web`` as a subprocess that says
where it listens. Nothing sleeps: a process is ready when it has printed ``listening on``."""

from __future__ import annotations

import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from controller.bench import Bench
from controller.web.auth import Role, add_account

START_SECONDS = 30.0
PASSWORDS = {"dealer1": "deal-the-cards", "surv1": "watch-the-table", "super1": "pit-boss-ok"}


@dataclass
class FloorWeb:
    url: str
    process: subprocess.Popen[bytes]
    lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    def stop(self) -> None:
        """End the process and the thread reading its stderr (the suite's leak check)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        if self.reader is not None:
            self.reader.join(timeout=10)
        if self.process.stderr:
            self.process.stderr.close()


@pytest.fixture(name="journals", scope="session")
def fixture_journals(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two finished bench journals with faults (voids, holds): RWS-3CP (a face-down dealer
    hand) and RWS-NC3P."""
    made = []
    for game, seed in (("rws-three-card-poker", 3), ("rws-nc-three-pictures", 5)):
        directory = tmp_path_factory.mktemp(game)
        Bench(game, 12, seed=seed, faults="0.3", journal_dir=directory).run()
        made.append(directory)
    return made


@pytest.fixture(name="accounts", scope="session")
def fixture_accounts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("accounts") / "accounts"
    add_account(path, "dealer1", Role.DEALER, PASSWORDS["dealer1"])
    add_account(path, "surv1", Role.SURVEILLANCE, PASSWORDS["surv1"])
    add_account(path, "super1", Role.SUPERVISOR, PASSWORDS["super1"])
    return path


def floor_config(directory: Path, database: Path) -> Path:
    """A floor config naming ``database`` (the page reads only ``database``)."""
    path = directory / "floor.toml"
    path.write_text(f'[floor]\nsite = "site1"\nbroker = "mqtt://127.0.0.1:1883"\n'
                    f'database = "{database}"\n')
    return path


def start_floor_web(config: Path, *extra: str) -> FloorWeb:
    """``tablectl floor web --port 0`` on ``config``; fails the test with its stderr if it does
    not say where it listens."""
    process = subprocess.Popen(
        [sys.executable, "-m", "controller", "floor", "web", "--config", str(config),
         "--port", "0", *extra], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    web = FloorWeb("", process)
    found = threading.Event()

    def drain() -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            line = raw.decode("utf-8", "replace")
            web.lines.append(line)
            if "listening on " in line:
                found.set()
        found.set()

    web.reader = threading.Thread(target=drain, name="floor-web-stderr")
    web.reader.start()
    found.wait(START_SECONDS)
    url = next((line.split("listening on ")[1].split()[0] for line in web.lines
                if "listening on " in line), None)
    if url is None:
        web.stop()
        pytest.fail(f"tablectl floor web did not start: {''.join(web.lines)[-2000:]}")
    web.url = url.rstrip("/")
    return web
