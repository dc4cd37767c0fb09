"""systemd/tablectl-web.service and its example config: local only by default, read-only on the
journal, and a config the web process accepts (its hardening score and ``systemd-analyze
verify`` are tests/systemd/test_unit.py's, parametrised over both units)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.web.config import load_web_config
from tests.systemd.test_unit import parse_unit

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "tablectl-web.service"
EXAMPLE = ROOT / "systemd" / "tablectl-web.example.toml"


@pytest.fixture(name="service", scope="module")
def fixture_service() -> dict[str, list[str]]:
    return parse_unit(UNIT.read_text(encoding="utf-8"))["Service"]


@pytest.mark.parametrize(("key", "value"), [
    ("User", "tablectl-web"), ("NoNewPrivileges", "yes"), ("CapabilityBoundingSet", ""),
    ("ProtectSystem", "strict"), ("ReadOnlyPaths", "/var/lib/tablectl"),
    ("IPAddressDeny", "any"), ("IPAddressAllow", "localhost"),
    ("RestartPreventExitStatus", "2"), ("StateDirectory", "tablectl-web"),
])
def test_required_directive(service: dict[str, list[str]], key: str, value: str) -> None:
    assert service.get(key, [None])[-1] == value


def test_groups_read_the_journal_and_reach_the_socket_read_only(
        service: dict[str, list[str]]) -> None:
    """Journal files are group tablectl (0640); the surveillance group's role on the socket
    is read-only, so nothing this process sends can change the table."""
    groups = service["SupplementaryGroups"][-1].split()
    assert set(groups) == {"tablectl", "tablectl-control", "tablectl-surveillance"}


def test_example_config_loads() -> None:
    config = load_web_config(EXAMPLE)
    assert config.loopback and not config.tls and config.accounts is None
