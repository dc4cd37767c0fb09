"""open_shoe picks the driver by dialect name and rejects unknown dialects by name."""

from __future__ import annotations

import queue

import pytest

from drivers.errors import DriverConfigError
from drivers.shoe import ShoeDialect, open_shoe
from drivers.shoe.beetek import BeeTekShoe
from drivers.shoe.scanner import ScannerShoe


@pytest.fixture(name="events")
def fixture_events() -> queue.Queue:
    return queue.Queue()


def test_dialects_are_wire_names():
    """Dialect names are the strings used in config and on the command line."""
    assert [d.value for d in ShoeDialect] == ["framed", "scanner", "beetek", "hid"]


def test_serial_dialects_build_unstarted_drivers(events):
    """scanner and beetek build their drivers (not started), with the deck map by name."""
    scanner = open_shoe("scanner", "loop://", events, deck="house-s2")
    beetek = open_shoe(ShoeDialect.BEETEK, "loop://", events)
    assert isinstance(scanner, ScannerShoe) and scanner.tracker.deck.name == "house-s2"
    assert isinstance(beetek, BeeTekShoe) and not beetek.running


def test_unknown_dialect_is_named(events):
    """An unknown dialect is a DriverConfigError naming it and listing the known ones."""
    with pytest.raises(DriverConfigError, match="unknown shoe dialect 'magnetic'.*framed, scanner"):
        open_shoe("magnetic", "loop://", events)
