"""The ``systemd-analyze security`` scores the docs quote are measured here, not typed (issue 27:
the docs said 1.2 for the table's unit where systemd 252 gives 1.5).

Each quote is found in its doc by pattern and compared with the score ``systemd-analyze security
--offline=yes`` gives the unit it names. Scores change with systemd's version (its weights do),
so the docs name the version they were measured with (:data:`MEASURED_WITH`) and the test is
skipped, saying so, on another one; without ``systemd-analyze`` it is skipped too (CI has
Debian's systemd).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SYSTEMD = ROOT / "systemd"
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
MEASURED_WITH = 252
"""The systemd version the docs' scores were measured with (Debian 12)."""

QUOTES = [
    # (doc, pattern whose group 1 is the score, units it is quoted for)
    ("docs/service.md", r"`systemd-analyze security --offline=yes` scores it (\d+\.\d)",
     ("tablectl.service",)),
    ("docs/install-raspberry-pi.md", r"systemd-analyze security tablectl +# exposure (\d+\.\d)",
     ("tablectl.service",)),
    ("docs/web.md", r"`systemd-analyze security` (\d+\.\d)\)", ("tablectl-web.service",)),
    ("docs/feed.md", r"`systemd-analyze security` exposure (\d+\.\d) for both units",
     ("tablectl-feed.service", "tablectl-floor.service")),
]
DROP_IN = ("docs/service.md", r"`PrivateNetwork=yes` in a drop-in \(score (\d+\.\d)")


def _version() -> int | None:
    if SYSTEMD_ANALYZE is None:
        return None
    out = subprocess.run([SYSTEMD_ANALYZE, "--version"], capture_output=True, text=True,
                         timeout=60, check=False).stdout
    match = re.match(r"systemd (\d+)", out)
    return int(match[1]) if match else None


VERSION = _version()
measured_here = pytest.mark.skipif(
    VERSION != MEASURED_WITH,
    reason=f"the docs' scores are systemd {MEASURED_WITH}'s; here: "
           + ("no systemd-analyze" if SYSTEMD_ANALYZE is None else f"systemd {VERSION}"))


def score(unit: Path) -> str:
    assert SYSTEMD_ANALYZE is not None
    result = subprocess.run([SYSTEMD_ANALYZE, "security", "--offline=yes", str(unit)],
                            capture_output=True, text=True, timeout=120, check=False)
    match = re.search(rf"Overall exposure level for {re.escape(unit.name)}: (\d+\.\d)",
                      result.stdout + result.stderr)
    assert match, result.stdout + result.stderr
    return match[1]


def quoted(doc: str, pattern: str) -> str:
    match = re.search(pattern, (ROOT / doc).read_text(encoding="utf-8"))
    assert match, f"{doc} no longer quotes the score as {pattern!r}"
    return match[1]


@measured_here
@pytest.mark.parametrize(("doc", "pattern", "units"), QUOTES, ids=[q[0] for q in QUOTES])
def test_the_quoted_score_is_the_measured_one(doc: str, pattern: str,
                                              units: tuple[str, ...]) -> None:
    for unit in units:
        assert quoted(doc, pattern) == score(SYSTEMD / unit), (doc, unit)


@measured_here
def test_the_private_network_drop_in_score_is_measured(tmp_path: Path) -> None:
    """docs/service.md quotes the score of the unit with ``PrivateNetwork=yes`` added."""
    unit = tmp_path / "tablectl.service"
    text = (SYSTEMD / "tablectl.service").read_text(encoding="utf-8")
    unit.write_text(text.replace("[Service]\n", "[Service]\nPrivateNetwork=yes\n", 1))
    assert quoted(*DROP_IN) == score(unit)
