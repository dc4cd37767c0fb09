"""The service checks its software at start (issue 16): the verdict is journaled with the
session, reported in round.status, and with ``software.verify = "required"`` a failed check
keeps every round closed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.journal import iter_records
from controller.selfcheck import status as software_status
from controller.service.lifecycle.app import Service
from controller.service.config import parse_config
from controller.service.control.server import ControlClient, RequestRefused
from controller.service.protocol import ErrorCode
from tests.controller.cli.test_selfcheck import write_key_pair
from tests.controller.service.conftest import service_toml


@pytest.fixture(name="forget_verdict", autouse=True)
def fixture_forget_verdict() -> Iterator[None]:
    """The verdict is per process: forget this test's so later tests journal their own."""
    yield
    software_status.reset()


def config_with_software(tmp_path: Path, verify: str) -> object:
    """A manifest the key never signed (so the check fails with bad_signature)."""
    _, public = write_key_pair(tmp_path)
    manifest = tmp_path / "manifest.json"
    manifest.write_text("{}")
    (tmp_path / "manifest.json.sig").write_bytes(bytes(64))
    text = service_toml(tmp_path) + (f'\n[software]\nmanifest = "{manifest}"\n'
                                     f'public_key = "{public}"\nverify = "{verify}"\n')
    return parse_config(text, source=str(tmp_path / "tablectl.toml"))


@pytest.mark.parametrize("verify", ["required", "report"])
def test_failed_check_is_journaled_and_blocks_rounds_only_when_required(
        tmp_path: Path, verify: str) -> None:
    """The session_started record carries the digest and the verdict; round.status reports
    it; round.open is refused only under verify = "required"."""
    config = config_with_software(tmp_path, verify)
    with Service(config) as service:  # type: ignore[arg-type]
        assert service.ready.wait(10)
        with ControlClient(config.control.socket) as client:  # type: ignore[attr-defined]
            status = client.request("round.status")
            assert status["software"]["verdict"] == "bad_signature"
            if verify == "required":
                with pytest.raises(RequestRefused) as caught:
                    client.request("round.open")
                assert caught.value.code is ErrorCode.REFUSED
                assert "software not verified (BAD SIGNATURE" in caught.value.message
            else:
                client.request("round.open")
    sessions = [r.payload for r in iter_records([config.journal.directory])  # type: ignore
                if r.event_type == "session_started"]
    selfcheck = sessions[0]["software"]["selfcheck"]
    assert (selfcheck["verdict"], selfcheck["verified"]) == ("bad_signature", False)
    assert len(selfcheck["digest"]) == 64


def test_unknown_verify_value_is_a_config_error(tmp_path: Path) -> None:
    """``verify`` takes report or required; anything else is refused by name."""
    from controller.service.errors import ConfigError

    text = service_toml(tmp_path) + '\n[software]\nmanifest = "m"\npublic_key = "k"\n' \
                                    'verify = "always"\n'
    with pytest.raises(ConfigError, match="software.verify: unknown setting 'always'; use "
                                          "one of report, required"):
        parse_config(text, source="t.toml")
