"""``tablectl probe`` against simulated devices on real ptys and sockets."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from controller.cli import main
from firmware_sim.serve import PtyServer, TcpServer
from firmware_sim.shoe_framed import FramedShoeSim
from firmware_sim.shuffler import ShufflerSim


@pytest.fixture(name="shuffler_pty")
def fixture_shuffler_pty() -> Iterator[PtyServer]:
    with PtyServer(ShufflerSim(seed=1)) as server:
        yield server


def test_probe_shuffler(shuffler_pty: PtyServer, capsys: pytest.CaptureFixture[str]) -> None:
    """The shuffler's identity and status are printed, exit 0."""
    assert main(["probe", "--device", "shuffler", "--url", shuffler_pty.path]) == 0
    out = capsys.readouterr().out
    assert "HF-3 hand-forming shuffler" in out and "status idle" in out


def test_probe_shoe_json(capsys: pytest.CaptureFixture[str]) -> None:
    """--json prints one object per line; cards are two-character codes."""
    sim = FramedShoeSim(seed=2)
    drawn = [sim.draw() for _ in range(3)]  # queued until the host connects
    with TcpServer(sim) as server:
        assert main(["probe", "--device", "shoe", "--url", server.url, "--seconds", "0.5",
                     "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    schema = json.loads((Path(__file__).resolve().parents[3] / "schemas" /
                         "probe-line.schema.json").read_text(encoding="utf-8"))
    for line in lines:  # the published schema (issue 16)
        jsonschema.validate(line, schema)
    assert lines[0]["event"] == "identity" and lines[1]["event"] == "status"
    cards = [line["card"] for line in lines if line["event"] == "card"]
    assert cards == [card.code for card in drawn if card is not None]


def test_probe_nothing_there(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No device at the URL: exit 2 with one clear line, within 5 s."""
    started = time.monotonic()
    code = main(["probe", "--device", "shuffler", "--url", str(tmp_path / "ttyNONE")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and time.monotonic() - started < 5
    assert len(err.splitlines()) == 1 and "did not connect" in err


def test_probe_mute_device(capsys: pytest.CaptureFixture[str]) -> None:
    """A port that opens but never answers: exit 2 with one line naming the timeout, within 5 s."""

    class Mute(ShufflerSim):
        def receive(self, data: bytes) -> None:
            pass

        def tick(self, now: float) -> None:
            pass

    with PtyServer(Mute()) as server:
        started = time.monotonic()
        code = main(["probe", "--device", "shuffler", "--url", server.path])
    err = capsys.readouterr().err.strip()
    assert code == 2 and time.monotonic() - started < 5
    assert len(err.splitlines()) == 1 and "no reply to IDENTIFY" in err


def _libusb_present() -> bool:
    import usb.backend.libusb1

    return usb.backend.libusb1.get_backend() is not None


def test_probe_hid_accepts_the_usb_slash_slash_form(capsys: pytest.CaptureFixture[str]) -> None:
    """``--dialect hid --url usb://1209:5ca1`` is parsed (the bulk link's URL form), not refused
    as "ids must be hex"; with no such device attached it fails in one line naming it."""
    code = main(["probe", "--device", "shoe", "--dialect", "hid", "--url", "usb://1209:5ca1",
                 "--seconds", "0.1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert "must be hex" not in err[-1] and "usb:1209:5ca1" in err[-1]


@pytest.mark.skipif(_libusb_present(), reason="libusb is installed here")
def test_without_libusb_the_error_says_what_to_install() -> None:
    """With no libusb, opening a USB device names the package to install rather than
    pyusb's bare "No backend available"."""
    from drivers.errors import OpenFailed
    from drivers.usb_find import find_device

    with pytest.raises(OpenFailed, match=r"install libusb-1\.0 \(Debian: apt-get install "
                                         r"libusb-1\.0-0\)"):
        find_device(0x1209, 0x5CA1, None, None, "usb:1209:5ca1")
