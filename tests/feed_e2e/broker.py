"""The floor lab (``benchmarks/floorlab.py``) for pytest: a missing program fails the test in
CI (``CI=true``: the CI machine must have it) and skips it elsewhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.floorlab import SITE, MissingBinary, Mosquitto, find_binary, free_port
from benchmarks.floorlab import make_pki as _make_pki

__all__ = ["SITE", "Mosquitto", "free_port", "make_pki", "need_binary", "start_broker"]


def need_binary(name: str) -> str:
    try:
        return find_binary(name)
    except MissingBinary as error:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{error} (.ci/run does)", pytrace=False)
        pytest.skip(str(error))


def make_pki(directory: Path, identities: list[str]) -> Path:
    need_binary("openssl")
    return _make_pki(directory, identities)


def start_broker(directory: Path, pki: Path) -> Mosquitto:
    need_binary("mosquitto")
    broker = Mosquitto(directory, pki)
    broker.start()
    return broker
