"""``schemas/studio-openapi.json`` and ``systemd/studio.example.toml`` cannot drift from the
gateway: every route the server serves is in the document, every refusal code the code gives
is in its enum, and the example config loads."""

from __future__ import annotations

import json
import re
from pathlib import Path

from controller.studio.config import load_studio_config

ROOT = Path(__file__).resolve().parents[2]
DOC = json.loads((ROOT / "schemas" / "studio-openapi.json").read_text())
STUDIO = ROOT / "controller" / "studio"


def test_every_route_is_documented() -> None:
    """The routes ``server.py`` matches are exactly the document's paths."""
    source = (STUDIO / "server.py").read_text()
    served = {"/v1/status", "/v1/rounds"} | {
        f"/v1/rounds/{{round}}/{what}"
        for what in re.search(r"\(wagers\|close\|events\)", source).group(0)[1:-1].split("|")}
    assert served == set(DOC["paths"])


def test_every_refusal_code_is_in_the_enum() -> None:
    """Each code the gateway can answer is one a generated client knows."""
    codes = set()
    for path in STUDIO.glob("*.py"):
        codes |= set(re.findall(r'StudioRefusal\(\d+, "([a-z_]+)"', path.read_text()))
        codes |= set(re.findall(r'_refuse\(client, \d+, "([a-z_]+)"', path.read_text()))
    codes |= {"refused", "unavailable", "internal"}
    codes |= set(re.findall(r'\d+: "([a-z_]+)"', (STUDIO / "server.py").read_text()))
    assert codes <= set(DOC["components"]["schemas"]["Refusal"]["properties"]["code"]["enum"])
    assert "key_reused" in codes and "batch_too_large" in codes


def test_example_config_loads() -> None:
    config = load_studio_config(ROOT / "systemd" / "studio.example.toml")
    assert config.clients == frozenset({"gs-studio-1"}) and config.max_batch == 500
