"""systemd/tablectl-feed.service and tablectl-floor.service: hardened like the table's unit,
with the network the feed and the floor need and nothing else."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.systemd.test_unit import MAX_EXPOSURE, ROOT, SYSTEMD_ANALYZE, parse_unit

UNITS = ["tablectl-feed.service", "tablectl-floor.service", "tablectl-studio.service"]
needs_systemd_analyze = pytest.mark.skipif(SYSTEMD_ANALYZE is None,
                                           reason="systemd-analyze not installed")


@pytest.mark.parametrize("name", UNITS)
def test_own_account_network_only_to_the_broker_and_restart(name: str) -> None:
    """Its own account, AF_INET for the broker (the table's service has none), IP allowed
    only where listed, restarted after a crash (the feed resumes from its cursor), not after a
    bad config (exit 2), and runs ``tablectl feed|floor --config``."""
    service = parse_unit((ROOT / "systemd" / name).read_text(encoding="utf-8"))["Service"]
    command = name.removeprefix("tablectl-").removesuffix(".service")
    assert service["User"] == [f"tablectl-{command}"]
    assert "AF_INET" in service["RestrictAddressFamilies"][0].split()
    assert service["IPAddressDeny"] == ["any"]
    assert service["Restart"] == ["always"] and service["RestartPreventExitStatus"] == ["2"]
    program = "python -m controller.feed" if command == "feed" else f"tablectl {command}"
    assert re.search(rf"/bin/{program} --config /etc/tablectl/\S+\.toml$",
                     service["ExecStart"][0])
    assert service["NoNewPrivileges"] == ["yes"] and service["CapabilityBoundingSet"] == [""]


@needs_systemd_analyze
@pytest.mark.parametrize("name", UNITS)
def test_security_exposure_and_verify(tmp_path: Path, name: str) -> None:
    """``systemd-analyze security`` scores it 2.0 or less and ``verify`` is clean."""
    assert SYSTEMD_ANALYZE is not None
    result = subprocess.run([SYSTEMD_ANALYZE, "security", "--offline=yes",
                             str(ROOT / "systemd" / name)], capture_output=True, text=True,
                            timeout=60, check=False)
    match = re.search(rf"Overall exposure level for {re.escape(name)}: (\d+\.\d+)",
                      result.stdout + result.stderr)
    assert match and float(match[1]) <= MAX_EXPOSURE, result.stdout + result.stderr
    copy = tmp_path / name
    text = (ROOT / "systemd" / name).read_text(encoding="utf-8")
    for program in ("/opt/tablectl/current/bin/tablectl", "/opt/tablectl/current/bin/python"):
        text = text.replace(program, "/usr/bin/true")
    copy.write_text(text, encoding="utf-8")
    result = subprocess.run([SYSTEMD_ANALYZE, "verify", str(copy)], capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 0 and not (result.stdout + result.stderr).strip(), \
        result.stdout + result.stderr
