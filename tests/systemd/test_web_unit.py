"""systemd/tablectl-web.service and its example config: hardened like the table's unit, local
only by default, read-only on the journal, and a config the web process accepts."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from controller.web.config import load_web_config
from tests.systemd.test_unit import MAX_EXPOSURE, SYSTEMD_ANALYZE, needs_systemd_analyze, \
    parse_unit

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


@needs_systemd_analyze
def test_security_exposure_at_most_2() -> None:
    result = subprocess.run([SYSTEMD_ANALYZE, "security", "--offline=yes", str(UNIT)],
                            capture_output=True, text=True, timeout=60, check=False)
    match = re.search(r"Overall exposure level for tablectl-web\.service: (\d+\.\d+)",
                      result.stdout + result.stderr)
    assert match, result.stdout + result.stderr
    assert float(match[1]) <= MAX_EXPOSURE, result.stdout


@needs_systemd_analyze
def test_verify_is_clean(tmp_path: Path) -> None:
    text = UNIT.read_text(encoding="utf-8").replace("/opt/tablectl/current/bin/tablectl",
                                                    "/usr/bin/true")
    copy = tmp_path / "tablectl-web.service"
    copy.write_text(text, encoding="utf-8")
    result = subprocess.run([SYSTEMD_ANALYZE, "verify", str(copy)], capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 0 and not result.stdout.strip() and not result.stderr.strip(), \
        result.stdout + result.stderr
