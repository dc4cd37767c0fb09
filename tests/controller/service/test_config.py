"""The service config: TOML -> frozen values; every error names the file, the key, the problem."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.games.rules import GameId
from controller.journal.policy import Durability
from controller.service.config import (
    BENCH_SOURCE,
    DEFAULT_CONTROL_SOCKET,
    MAX_LIMIT_MINOR,
    DeviceKind,
    ShoeDialect,
    default_bench_config,
    load_config,
    parse_config,
)
from controller.service.errors import ConfigError
from controller.service.policy import ConnectionLimits
from controller.service.protocol import MAX_MINOR_UNITS
from controller.settlement.model import BetLimit
from tests.controller.service.conftest import MINIMAL

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "systemd" / "tablectl.example.toml"
SERVICE_DOC = ROOT / "docs" / "service.md"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tablectl.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_example_file_loads() -> None:
    """The shipped example is a complete, valid config (docs/service.md points at it)."""
    config = load_config(EXAMPLE)
    assert config.source == str(EXAMPLE)
    assert config.table_id == "T07"
    assert config.game is GameId.RWS_3CP
    assert config.boxes == ("1", "2", "3", "4", "5", "6", "7")
    assert config.device.kind is DeviceKind.SHUFFLER
    assert config.device.url == "/dev/table-shuffler"
    assert config.limits["ante"] == BetLimit(500, 100000)
    assert config.rounding_unit == 25
    assert config.progressive is not None and config.progressive.contribution_per_mille == 150
    assert config.journal.durability is Durability.MONEY
    assert config.journal.hmac_key_file == Path("/etc/tablectl/journal.key")
    assert config.journal.retention_days == 365
    assert config.control.socket == DEFAULT_CONTROL_SOCKET
    assert config.control.limits == ConnectionLimits(64, 4, 120.0)


def test_every_example_key_is_documented() -> None:
    """docs/service.md documents every key the example uses, by its dotted name."""
    doc = SERVICE_DOC.read_text(encoding="utf-8")

    def keys(table: dict[str, object], prefix: str = "") -> list[str]:
        found = []
        for key, value in table.items():
            dotted = "limits.<bet>" if prefix == "limits." else f"{prefix}{key}"
            found += keys(value, f"{dotted}.") if isinstance(value, dict) else [dotted]
        return found

    data = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    missing = sorted({key for key in keys(data) if f"`{key}`" not in doc})
    assert not missing, f"undocumented keys: {missing}"


def test_defaults_of_a_minimal_config(tmp_path: Path) -> None:
    """Left out: all boxes, rounding 1, durability money, 365 days, no key, no TCP listener."""
    config = load_config(_write(tmp_path, MINIMAL))
    assert config.boxes == tuple(str(n) for n in range(1, 9))
    assert config.rounding_unit == 1
    assert config.journal.durability is Durability.MONEY
    assert config.journal.retention_days == 365
    assert config.journal.hmac_key_file is None
    assert config.control.socket == Path("/run/tablectl/control.sock")
    assert config.control.limits == ConnectionLimits()
    assert config.progressive is None


def test_relative_paths_resolve_against_the_config_directory(tmp_path: Path) -> None:
    """A config and its key can travel together: relative paths are beside the file."""
    text = MINIMAL.replace('"/var/lib/tablectl/journal"', '"journal"') + \
        'hmac_key_file = "journal.key"\n'
    config = load_config(_write(tmp_path, text))
    assert config.journal.directory == tmp_path.resolve() / "journal"
    assert config.journal.hmac_key_file == tmp_path.resolve() / "journal.key"


def test_boxes_are_kept_in_dealing_order(tmp_path: Path) -> None:
    """Boxes are dealt clockwise from the dealer's left whatever order the file lists them."""
    text = MINIMAL.replace('game = "rws-nc-three-pictures"',
                           'game = "rws-nc-three-pictures"\nboxes = ["5", "1", "3"]')
    assert load_config(_write(tmp_path, text)).boxes == ("1", "3", "5")


def test_live_game_with_a_scanner_shoe(tmp_path: Path) -> None:
    """LIVE-3P uses the live procedure read by a shoe; the deck map applies to the scanner."""
    text = MINIMAL.replace("rws-nc-three-pictures", "live-three-pictures").replace(
        'kind = "shuffler"\nurl = "/dev/table-shuffler"',
        'kind = "live"\ndialect = "scanner"\ndeck = "house-s2"\nurl = "/dev/table-shoe"')
    config = load_config(_write(tmp_path, text))
    assert config.device.kind is DeviceKind.LIVE
    assert config.device.dialect is ShoeDialect.SCANNER
    assert config.device.deck == "house-s2"
    assert config.boxes == ("p1", "p2", "p3")


@pytest.mark.parametrize("url", ["/dev/table-shoe", "socket://127.0.0.1:7000",
                                 "socket://[::1]:7000", "usb://1209:5348/SN1", "sim"])
def test_accepted_device_urls(tmp_path: Path, url: str) -> None:
    """Serial paths, socket://, USB bulk and the in-process simulator are device URLs."""
    text = MINIMAL.replace('"/dev/table-shuffler"', f'"{url}"')
    assert load_config(_write(tmp_path, text)).device.url == url


def test_hid_scanner_takes_a_usb_address(tmp_path: Path) -> None:
    """The hid dialect is addressed as usb:VID:PID[:SERIAL] (drivers.shoe.hid.parse_usb_url)."""
    text = MINIMAL.replace('kind = "shuffler"\nurl = "/dev/table-shuffler"',
                           'kind = "shoe"\ndialect = "hid"\nurl = "usb:1209:5ca1:HID0001"')
    assert load_config(_write(tmp_path, text)).device.url == "usb:1209:5ca1:HID0001"


def test_a_tcp_control_listener_is_refused(tmp_path: Path) -> None:
    """[control.tcp] is gone (issue 11): an unauthenticated TCP peer read the dealer's face-down
    hand. A config that still asks for it is refused with the way to remote access instead."""
    text = MINIMAL + '\n[control.tcp]\nlisten = "127.0.0.1:7420"\n'
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, text))
    assert caught.value.key == "control.tcp"
    assert "no credentials" in caught.value.problem and "SSH" in caught.value.problem


@pytest.mark.parametrize(("limit", "text"), [
    ("limits.ante.max", "[limits.ante]\nmin = 500\nmax = 9223372036854775807\n"),
    ("limits.ante.min", "[limits.ante]\nmin = 1000000000001\nmax = 1000000000001\n"),
    ("progressive.seed", "[progressive]\nseed = 9007199254740993\n"),
])
def test_money_beyond_what_the_journal_carries_is_refused(tmp_path: Path, limit: str,
                                                          text: str) -> None:
    """A limit of 2**63-1 was accepted (issue 11): amounts are capped at 10**12 minor units, so
    a stake times the largest payout stays an exact integer for the journal and floor systems
    (2**53-1); the error names the key and the cap."""
    config = MINIMAL.replace("rws-nc-three-pictures", "rws-three-card-poker") + "\n" + text
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, config))
    assert caught.value.key == limit
    assert f"must be at most {MAX_LIMIT_MINOR}" in caught.value.problem
    assert MAX_LIMIT_MINOR * 189 < MAX_MINOR_UNITS  # 188 to 1 is the largest payout


def test_connection_limits_are_configurable(tmp_path: Path) -> None:
    """[control] max_connections, reserved_connections, idle_seconds and max_per_account
    reach the server."""
    text = MINIMAL + "\n[control]\nmax_connections = 8\nreserved_connections = 2\n" \
        "idle_seconds = 30\nmax_per_account = 3\n"
    assert load_config(_write(tmp_path, text)).control.limits == ConnectionLimits(
        8, 2, 30.0, per_account=3)


def test_bench_default_is_simulated_and_valid(tmp_path: Path) -> None:
    """The embedded bench config passes the same loader, uses simulators and stays out of /run."""
    config = default_bench_config(runtime_dir=tmp_path / "run", state_dir=tmp_path / "state")
    assert config.source == BENCH_SOURCE
    assert config.device.simulated
    assert config.control.socket == tmp_path / "run" / "control.sock"
    assert config.control.socket_group is None
    assert config.journal.directory == tmp_path / "state" / "bench-journal"
    assert config.journal.durability is Durability.NONE


def test_layout_seam_builds_the_table_layout(tmp_path: Path) -> None:
    """The config hands controller.table the same layout it would build itself."""
    layout = load_config(EXAMPLE).layout()
    assert layout.game is GameId.RWS_3CP
    assert layout.device.value == "shuffler"
    assert layout.table_id == "T07"
    assert layout.rounding_unit == 25
    assert layout.limits["ante"] == BetLimit(500, 100000)


BAD = [
    # (what to change, dotted key, problem pattern)
    (("[table]", "[tabel]"), "tabel", r"unknown key \(did you mean 'table'\?\)"),
    (('game = "', 'gmae = "'), "table.gmae", r"unknown key \(did you mean 'game'\?\)"),
    (("rws-nc-three-pictures", "baccarat"), "table.game", "unknown game 'baccarat'; known"),
    (('id = "T1"', 'id = "T 1"'), "table.id", "letters, digits"),
    (('id = "T1"', 'id = "T1"\nboxes = ["9"]'), "table.boxes", "has no box '9'"),
    (('id = "T1"', 'id = "T1"\nboxes = ["1", "1"]'), "table.boxes", "listed twice"),
    (('id = "T1"', 'id = "T1"\nrounding_unit = true'), "table.rounding_unit",
     "must be an integer"),
    (('id = "T1"', 'id = "T1"\nrounding_unit = 0'), "table.rounding_unit", "at least 1"),
    (("[journal]", '[limits.tie]\nmin = 100\nmax = "10"\n[journal]'), "limits.tie.max",
     r"must be an integer \(money is integer minor units"),
    (("[journal]", "[limits.tie]\nmin = 100\nmax = 10\n[journal]"), "limits.tie.max",
     "below min 100"),
    (("[journal]", "[limits.tie]\nmin = 100\nmax = 200\nmaxx = 3\n[journal]"),
     "limits.tie.maxx", "unknown key"),
    (("[journal]", "[limits.ante]\nmin = 1\nmax = 2\n[journal]"), "limits.ante",
     "has no bet 'ante'"),
    (("[journal]", "[limits]\ntie = 5\n[journal]"), "limits.tie", "must be a table"),
    (('kind = "shuffler"', 'kind = "shoe"'), "device.dialect", "missing"),
    (('kind = "shuffler"', 'kind = "shoe"\ndialect = "qr"'), "device.dialect",
     "unknown shoe dialect 'qr'"),
    (('kind = "shuffler"', 'kind = "shuffler"\ndialect = "framed"'), "device.dialect",
     "only a shoe has a dialect"),
    (('kind = "shuffler"', 'kind = "shuffler"\ndeck = "house-s2"'), "device.deck",
     "only the scanner and hid"),
    (('kind = "shuffler"', 'kind = "robot"'), "device.kind", "unknown device kind"),
    (('kind = "shuffler"', 'kind = "live"\ndialect = "scanner"'), "device.kind",
     "LIVE-3P procedure"),
    (("rws-nc-three-pictures", "live-three-pictures"), "device.kind", "must be 'live'"),
    (('"/dev/table-shuffler"', '"ttyUSB0"'), "device.url", "absolute device path"),
    (('"/dev/table-shuffler"', '"socket://host"'), "device.url", "socket://HOST:PORT"),
    (('"/dev/table-shuffler"', '"usb:1209:5ca1"'), "device.url", "HID address"),
    (('kind = "shuffler"\nurl = "/dev/table-shuffler"',
      'kind = "shoe"\ndialect = "hid"\nurl = "/dev/hidraw0"'), "device.url",
     "usb:VID:PID"),
    (('directory = "', 'durability = "sometimes"\ndirectory = "'), "journal.durability",
     "unknown policy 'sometimes'; use one of always, money, none"),
    (('directory = "', 'retention_days = 0\ndirectory = "'), "journal.retention_days",
     "at least 1"),
    (('directory = "/var/lib/tablectl/journal"', ""), "journal.directory", "missing"),
    (("[journal]", "[progressive]\nstake = 500\n[journal]"), "progressive",
     "has no progressive bet"),
    (("[journal]", '[control]\nsurveillance_group = "tablectl-operators"\n[journal]'),
     "control.surveillance_group", "must differ"),
    (("[journal]", '[control]\noperators_group = "Bad Group"\n[journal]'),
     "control.operators_group", "not a group name"),
    (("[journal]", "[control]\nmax_connections = 0\n[journal]"), "control.max_connections",
     "at least 1"),
]


@pytest.mark.parametrize(("change", "key", "problem"), BAD, ids=[case[1] for case in BAD])
def test_bad_config_names_file_key_and_problem(tmp_path: Path, change: tuple[str, str],
                                               key: str, problem: str) -> None:
    """Each mistake is refused with one line: FILE: KEY: PROBLEM."""
    old, new = change
    assert old in MINIMAL
    path = _write(tmp_path, MINIMAL.replace(old, new, 1))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    error = caught.value
    assert (error.source, error.key) == (str(path), key)
    assert re.search(problem, error.problem), error.problem
    assert str(error).startswith(f"{path}: {key}: ")
    assert "\n" not in str(error)


def test_missing_section_names_it(tmp_path: Path) -> None:
    """A config without [journal] says so."""
    path = _write(tmp_path, MINIMAL.split("[journal]")[0])
    with pytest.raises(ConfigError, match=r": journal: missing \(required\)$"):
        load_config(path)


def test_not_toml_names_the_file_and_line(tmp_path: Path) -> None:
    """A syntax error names the file and where in it; there is no key."""
    path = _write(tmp_path, "[table]\nid = \n")
    with pytest.raises(ConfigError, match=r"not valid TOML: .*line 2") as caught:
        load_config(path)
    assert caught.value.key is None


def test_unreadable_file(tmp_path: Path) -> None:
    """A missing file is one line, not a traceback."""
    with pytest.raises(ConfigError, match=r"missing\.toml: cannot read: No such file"):
        load_config(tmp_path / "missing.toml")


def test_not_utf8(tmp_path: Path) -> None:
    """A file in another encoding is refused, not misread."""
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[table]\nid = "T\xe9"\n')
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path)


@given(st.from_regex(r"[a-z_]{1,12}", fullmatch=True))
def test_any_unknown_table_key_is_refused(name: str) -> None:
    """A key the loader does not know is never silently ignored, whatever it is called."""
    if name in {"id", "game", "boxes", "rounding_unit"}:
        return
    text = MINIMAL.replace('id = "T1"', f'id = "T1"\n{name} = 1')
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source="t.toml")
    assert caught.value.key == f"table.{name}"
    assert caught.value.problem.startswith("unknown key")
