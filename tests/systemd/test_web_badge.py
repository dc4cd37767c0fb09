"""The badge reader's udev rule and the web unit's drop-in (systemd/99-tablectl-badge.rules,
systemd/tablectl-web.service.d/badge-reader.conf): the web process gets the badge reader's USB
node and no device of the table's, and usbhid is kept off the reader (a badge id typed into the
kiosk's focused field would show a credential)."""

from __future__ import annotations

from pathlib import Path

from controller.web.config import load_web_config
from tests.systemd.test_unit import parse_rules, parse_unit

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "systemd" / "99-tablectl-badge.rules"
DROP_IN = ROOT / "systemd" / "tablectl-web.service.d" / "badge-reader.conf"
BASE = ROOT / "systemd" / "tablectl-web.service"
UNBIND = "/bin/sh -c 'echo -n %k > /sys/bus/usb/drivers/usbhid/unbind'"


def test_the_drop_in_opens_usb_nodes_to_the_badge_group_only() -> None:
    """The unit alone has no device; the drop-in turns PrivateDevices off, allows USB device
    nodes under the closed policy and adds the badge group, not tablectl-devices."""
    base = parse_unit(BASE.read_text(encoding="utf-8"))["Service"]
    assert base["PrivateDevices"][-1] == "yes" and base["DevicePolicy"][-1] == "closed"
    service = parse_unit(DROP_IN.read_text(encoding="utf-8"))["Service"]
    assert service["PrivateDevices"] == ["no"]
    assert service["DeviceAllow"] == ["char-usb_device rw"]
    assert service["SupplementaryGroups"] == ["tablectl-badge"]
    assert "DevicePolicy" not in service and "tablectl-devices" not in DROP_IN.read_text()


def test_the_rule_gives_the_reader_to_the_badge_group_and_keeps_usbhid_off() -> None:
    access, unbind = parse_rules(RULES.read_text(encoding="utf-8"))
    assert access["SUBSYSTEM"] == ("==", "usb") and access["ENV{DEVTYPE}"] == ("==", "usb_device")
    assert access["GROUP"] == ("=", "tablectl-badge") and access["MODE"] == ("=", "0660")
    assert unbind["ACTION"] == ("==", "bind") and unbind["DRIVER"] == ("==", "usbhid")
    assert unbind["RUN"] == ("+=", UNBIND)
    for key in ("idVendor", "idProduct", "serial"):
        assert unbind[f"ATTRS{{{key}}}"] == access[f"ATTR{{{key}}}"]
    vid, pid = access["ATTR{idVendor}"][1], access["ATTR{idProduct}"][1]
    assert int(vid, 16) and int(pid, 16)


def test_the_example_config_names_the_rule_s_reader(tmp_path: Path) -> None:
    """The example's commented ``badge_reader`` is the rule's example device, and loads."""
    access = parse_rules(RULES.read_text(encoding="utf-8"))[0]
    url = f"usb:{access['ATTR{idVendor}'][1]}:{access['ATTR{idProduct}'][1]}"
    example = (ROOT / "systemd" / "tablectl-web.example.toml").read_text(encoding="utf-8")
    assert f'# badge_reader = "{url}"' in example
    accounts = tmp_path / "accounts"
    accounts.write_text("")
    config = tmp_path / "web.toml"
    config.write_text(f'[web]\naccounts = "{accounts}"\nbadge_reader = "{url}"\n')
    assert load_web_config(config).badge_reader == url
