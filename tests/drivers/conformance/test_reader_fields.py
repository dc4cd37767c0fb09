"""The talk-only shoe dialects' field check: a reader that sends, beside a good card, bytes its
dialect's format does not allow (docs/protocols-shoes.md) fails the row that saw them, though
the card itself came out right; the simulators as they are pass."""

from __future__ import annotations

import queue
from pathlib import Path

import pytest

from drivers.conformance import Result, Verdict
from drivers.conformance.reader import SCENARIOS as READER_SCENARIOS
from drivers.conformance.runner import run_reader_suite
from drivers.events import DeviceEvent
from drivers.shoe import open_shoe
from firmware_sim.beetek import BeeTekShoeSim
from firmware_sim.scanner import ScannerShoeSim
from firmware_sim.serve import PtyServer
from testbed.conformance.bench import SimDealer


class ControlCharScanner(ScannerShoeSim):
    """Sends a line of control bytes before each good line (printable ASCII only)."""

    def line_for(self, code: str) -> bytes:
        return b"\x01\x7f\x05\r" + super().line_for(code)


class OverlongScanner(ScannerShoeSim):
    """Sends an 81-byte line before each good line (a line is at most 80 bytes)."""

    def line_for(self, code: str) -> bytes:
        return b"9" * 81 + b"\r" + super().line_for(code)


class BadBodyBeeTek(BeeTekShoeSim):
    """Sends a body the Bee-Tek format does not have before each card."""

    def output(self, data: bytes, messages: int = 1) -> None:
        super().output(b"[Game]<Nonsense:??>\r\n" + data, messages + 1)


def _run(sim: ScannerShoeSim | BeeTekShoeSim, dialect: str, tmp_path: Path) -> list[Result]:
    server = PtyServer(sim, link=tmp_path / "shoe")
    server.start()
    sim.bind_link(server)
    events: queue.Queue[DeviceEvent] = queue.Queue()
    try:
        return run_reader_suite(READER_SCENARIOS, open_shoe(dialect, str(tmp_path / "shoe"),
                                                            events),
                                events, operator=SimDealer(sim))  # type: ignore[arg-type]
    finally:
        sim.close()
        server.close()


@pytest.mark.parametrize(("sim", "dialect"), [
    (ControlCharScanner(seed=4), "scanner"),
    (OverlongScanner(seed=4), "scanner"),
    (BadBodyBeeTek(seed=4), "beetek"),
], ids=["scanner-control-bytes", "scanner-81-byte-line", "beetek-unknown-body"])
def test_bytes_outside_the_dialect_fail_the_row(sim: ScannerShoeSim | BeeTekShoeSim,
                                                dialect: str, tmp_path: Path) -> None:
    """The card row fails on the malformed bytes that came with the draw, naming the rule
    and how many bytes were dropped; the rows before it pass."""
    results = {r.key: r for r in _run(sim, dialect, tmp_path)}
    assert results["connects"].verdict is Verdict.PASS
    assert results["quiet"].verdict is Verdict.PASS
    row = results["card"]
    assert row.verdict is Verdict.FAIL, row.detail
    assert "bytes its dialect does not allow" in row.detail and "dropped" in row.detail
