"""The floor lab (``testbed/floorlab.py``) for pytest: a missing program fails the test in
CI (``CI=true``: the CI machine must have it) and skips it elsewhere."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

from testbed.floorlab import SITE, MissingBinary, Mosquitto, find_binary, free_port
from testbed.floorlab import make_pki as _make_pki

__all__ = ["SITE", "Mosquitto", "free_port", "make_pki", "missing", "need_binary", "start_broker"]


def missing(reason: str) -> NoReturn:
    """What a test does without a program it needs: fail in CI (``CI=true``: .ci/run installs
    it), skip elsewhere."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (.ci/run does)", pytrace=False)
    pytest.skip(reason)


def need_binary(name: str) -> str:
    try:
        return find_binary(name)
    except MissingBinary as error:
        missing(str(error))


def make_pki(directory: Path, identities: list[str]) -> Path:
    need_binary("openssl")
    return _make_pki(directory, identities)


def start_broker(directory: Path, pki: Path) -> Mosquitto:
    need_binary("mosquitto")
    broker = Mosquitto(directory, pki)
    broker.start()
    return broker
