"""The shipped udev rule that keeps usbhid off the HID scanner (systemd/99-tablectl.rules).

Bound to usbhid, a keyboard-mode scanner types its barcodes into the Pi's console whenever the
service is not holding it (docs/protocols-shoes.md, "HID"). The rule unbinds usbhid from the
scanner's interface each time the kernel binds it; these tests check its text, key by key.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.systemd.test_unit import RULES, parse_rules

UNBIND = "/bin/sh -c 'echo -n %k > /sys/bus/usb/drivers/usbhid/unbind'"


@pytest.fixture(name="rules", scope="module")
def fixture_rules() -> list[dict[str, tuple[str, str]]]:
    return parse_rules(Path(RULES).read_text(encoding="utf-8"))


@pytest.fixture(name="unbind", scope="module")
def fixture_unbind(rules) -> dict[str, tuple[str, str]]:
    found = [rule for rule in rules if rule.get("RUN", ("", ""))[1] == UNBIND]
    assert len(found) == 1, "one rule unbinds usbhid from the HID scanner"
    return found[0]


def test_unbind_runs_when_usbhid_binds_the_scanners_interface(unbind):
    """It fires on the kernel's bind of usbhid to a USB interface (not on add, when no driver
    is bound yet), and writes that interface's name (%k) to usbhid's unbind file."""
    assert unbind["ACTION"] == ("==", "bind")
    assert unbind["SUBSYSTEM"] == ("==", "usb")
    assert unbind["ENV{DEVTYPE}"] == ("==", "usb_interface")
    assert unbind["DRIVER"] == ("==", "usbhid")
    assert unbind["RUN"] == ("+=", UNBIND)


def test_unbind_matches_the_same_scanner_as_its_access_rule(rules, unbind):
    """Vendor, product and serial (of the parent usb device, ATTRS) are the scanner's, the same
    as the rule that gives the service its device node: no other keyboard loses usbhid."""
    access = [rule for rule in rules if rule.get("ENV{DEVTYPE}") == ("==", "usb_device")
              and rule.get("ATTR{serial}", ("", ""))[1] == unbind["ATTRS{serial}"][1]]
    assert len(access) == 1
    for key in ("idVendor", "idProduct", "serial"):
        assert unbind[f"ATTRS{{{key}}}"] == access[0][f"ATTR{{{key}}}"]
