"""``tablectl run`` applies its heap tuning by itself (issue 27): no environment variable, no
unit setting; the service's threads share glibc's one arena."""

from __future__ import annotations

from pathlib import Path

from tests.service_e2e.conftest import Processes, config_toml
from tests.service_e2e.rounds import bet_and_deal, finish

HEAP_MAX_BYTES = 64 << 20
"""glibc maps each thread arena at a multiple of its heap size, 64 MiB on 64-bit systems."""


def _thread_arenas(pid: int) -> list[str]:
    """The anonymous read-write mappings that start an arena of a thread other than main."""
    found = []
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split()
        start = int(fields[0].split("-")[0], 16)
        if len(fields) == 5 and fields[1].startswith("rw") and start % HEAP_MAX_BYTES == 0:
            found.append(line)
    return found


def test_the_service_threads_allocate_from_one_arena(processes: Processes,
                                                     tmp_path: Path) -> None:
    """After READY and a whole round (the table thread, the driver, the simulator, the control
    loop and the health thread have all allocated), no thread has an arena of its own: before
    issue 27 the service held ten, 2.3 MB resident after 1,000 rounds."""
    game = "rws-nc-three-pictures"
    service = processes.service(config_toml(tmp_path, game))
    service.wait_ready()
    with service.client() as client, service.client() as watcher:
        events = watcher.watch()
        bet_and_deal(client, events, game)
        assert finish(client, game)["state"] == "settled"
        assert _thread_arenas(service.process.pid) == []
    code, err = service.terminate()
    assert code == 0, err
