"""``tablectl deploy-files DIR``: the units, example configs and udev rules the Pi guide
installs come from the installed release (issue 27: the guide named files the wheel did not
ship)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from controller.cli import main
from controller.deploy import FILES, content

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "install-raspberry-pi.md"


def test_every_file_of_the_systemd_directory_is_shipped() -> None:
    """The package carries each file of ``systemd/`` byte for byte (links resolved by the
    wheel's build; pyproject's package data names them)."""
    systemd = ROOT / "systemd"
    assert sorted(item.name for item in FILES) == sorted(
        str(path.relative_to(systemd)) for path in systemd.rglob("*") if path.is_file())
    for item in FILES:
        assert content(item.name) == (ROOT / "systemd" / item.name).read_bytes(), item.name
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]
    assert package_data["controller.deploy"] == ["files/*", "files/*/*"]


def test_deploy_files_writes_them_and_keeps_an_edited_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "deploy"
    assert main(["deploy-files", str(out)]) == 0
    printed = capsys.readouterr().out
    for item in FILES:
        assert (out / item.name).read_bytes() == content(item.name)
        assert item.installs_to in printed
    edited = out / "tablectl.example.toml"
    edited.write_text("# edited\n")
    assert main(["deploy-files", str(out)]) == 2  # refused, nothing replaced
    err = capsys.readouterr().err
    assert err.startswith("tablectl deploy-files: ") and "exists (--force replaces it" in err
    assert edited.read_text() == "# edited\n"
    assert main(["deploy-files", str(out), "--force"]) == 0
    assert edited.read_bytes() == content("tablectl.example.toml")


def test_an_unwritable_directory_is_one_line(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["deploy-files", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write" in err


def test_the_pi_guide_installs_what_deploy_files_writes() -> None:
    """The guide's ``install`` steps take each file from ``tablectl deploy-files``'s output."""
    guide = GUIDE.read_text()
    assert "tablectl deploy-files" in guide
    for name in ("tablectl.service", "tablectl.example.toml", "99-tablectl.rules"):
        assert f"deploy/{name}" in guide, name
