"""The benchmark harness itself: a failing section never loses the others' figures, and the
service benchmarks start the service on a config it accepts (issue 27)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks import run
from benchmarks.service import service_config
from controller.service.config import load_config


def test_a_failing_section_reports_its_error_and_the_others_stand(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: one section raising (a READY timeout under load) ended the run with nothing
    printed. Now each section prints as it ends, the failed one carries its error in place of
    its figures, and the exit status says a section failed."""
    def fails() -> dict[str, Any]:
        raise TimeoutError("no READY within 30 s")

    monkeypatch.setitem(run.SECTIONS, "first", lambda: {"figure": 1})
    monkeypatch.setitem(run.SECTIONS, "second", fails)
    monkeypatch.setitem(run.SECTIONS, "third", lambda: {"figure": 3})
    assert run.main(["--json", "--only", "first,second,third"]) == 1
    out, err = capsys.readouterr()
    assert '"first": {"figure": 1}' in out and '"third": {"figure": 3}' in out
    assert '"error": "TimeoutError: no READY within 30 s"' in out
    assert "second" in err


def test_control_keys_land_in_the_control_table(tmp_path: Path) -> None:
    """``benchmarks/control.py`` raises ``control.max_connections``: appended after ``[clock]``
    the key was the clock's, and the service refused its config ("clock.max_connections:
    unknown key")."""
    path = tmp_path / "tablectl.toml"
    path.write_text(service_config(tmp_path, control_keys="max_connections = 1000\n"))
    assert load_config(path).control.limits.max_connections == 1000
