"""The vendor's page (docs/studio-vendor.md, issue 33 finding 6) is true as written: its
certificate recipe, run by bash exactly as the page prints it, makes certificates a game server
connects with; its table config is a valid config of a studio table."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from controller.service.config import parse_config
from tests.feed_e2e.broker import need_binary
from tests.service_e2e.conftest import Processes
from tests.studio.conftest import start_studio

PAGE = Path(__file__).resolve().parents[2] / "docs" / "studio-vendor.md"


def _block(after: str, language: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(after) if after else 0
    found = re.search(rf"```{language}\n(.*?)```", text[start:], re.DOTALL)
    assert found, f"no {language} block after {after!r} in {PAGE.name}"
    return found.group(1)


def test_the_certificate_recipe_makes_certificates_a_game_server_connects_with(
        processes: Processes, tmp_path: Path) -> None:
    """The recipe for the gateway's address 127.0.0.1 and the game server gs1: the gateway
    starts with what it made and gs1's status request is answered (mutual TLS, the client's
    clientAuth usage, the server's address in its subjectAltName all checked by real TLS)."""
    need_binary("openssl")
    pki = tmp_path / "pki"
    pki.mkdir()
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", _block("certificate-recipe", "sh")],
                          cwd=pki, env={**os.environ, "GATEWAY_IP": "127.0.0.1", "CLIENT": "gs1"},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    for name in ("ca.pem", "server.pem", "server.key", "gs1.pem", "gs1.key"):
        assert (pki / name).stat().st_size > 0, name
    assert oct((pki / "server.key").stat().st_mode & 0o777) == "0o400"
    studio = start_studio(processes, tmp_path, pki, max_batch=100)
    try:
        status, answer = studio.call("GET", "/v1/status")
        assert status == 200 and answer["ok"], answer
    finally:
        studio.gateway.terminate()
        studio.gateway.communicate(timeout=30)
        studio.service.terminate()


def test_the_studio_tables_config_is_a_valid_config(tmp_path: Path) -> None:
    """The page's tablectl.toml parses as the service reads it (the machine's groups and paths
    replaced by this test's: they are the Pi's), with the gateway's group and the clock policy
    it names."""
    text = _block("The table's config", "toml")
    text = text.replace('"/var/lib/tablectl/journal"', f'"{tmp_path / "journal"}"')
    config = parse_config(text, source=str(tmp_path / "tablectl.toml"))
    assert config.layout().rules.id.value == "live-three-pictures"
    assert config.control.studio_group == "tablectl-studio"
    assert config.clock.unsynchronised.value == "refuse"
