"""What the feed's own program loads: its memory on the table is budgeted (docs/feed.md,
"Memory"), so the modules it does not use stay out, and the one a library imports without
using it (paho-mqtt's ``urllib.request``) is deferred, not broken."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

NOT_FOR_THE_FEED = (
    "structlog",  # 4 MB with asyncio: controller.feed.log writes the same lines
    "asyncio",
    "controller.journal.writer",  # the feed only reads the journal
    "http.client",  # paho's urllib.request (deferred) and what it brings
    "email",
    "decimal",  # journal.record looks Decimal and Fraction up only when loaded
    "fractions",
    "argparse",  # getopt does for two options
    "_strptime",  # journal.record parses its own timestamp form
    "cryptography",  # 7.6 MB: the feed signs through the libcrypto ssl maps (feed.signer)
)


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=60, check=False,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip()


def test_the_feed_program_loads_nothing_it_does_not_use() -> None:
    """``python -m controller.feed``'s whole program, after reading records the way the feed
    does: none of the modules above, and ``urllib.request`` only as its stand-in."""
    code = ("import sys, controller.feed.__main__, controller.feed.run\n"
            "from controller.journal.record import Record, parse_ts\n"
            "parse_ts('2026-11-25T19:04:39.215055Z')\n"
            "from controller.feed.signer import Signer\n"
            "assert len(Signer(bytes(32)).sign(b'record')) == 64\n"
            f"unwanted = {NOT_FOR_THE_FEED!r}\n"
            "print('loaded:', *sorted(m for m in sys.modules if m.split('.')[0] in unwanted "
            "or m in unwanted))\n"
            "print(type(sys.modules['urllib.request']).__name__)")
    loaded, stand_in = _run(code).splitlines()
    assert loaded.strip() == "loaded:"
    assert stand_in == "DeferredModule"


def test_a_deferred_module_loads_on_first_use_and_then_is_the_real_one() -> None:
    """paho imports ``urllib.request`` and reads it only for proxies: through the stand-in
    it gets the real functions on first use (the module loads then), and every later import
    or attribute is the real module, on ``sys.modules`` and on its package alike."""
    code = """
import sys
from controller.feed.deferred import DeferredModule, defer_unused_imports
defer_unused_imports()
import paho.mqtt.client as mqtt
stand_in = mqtt.urllib.request
assert isinstance(stand_in, DeferredModule) and 'http.client' not in sys.modules
getproxies = stand_in.getproxies
real = sys.modules['urllib.request']
assert not isinstance(real, DeferredModule) and 'http.client' in sys.modules
assert getproxies is real.getproxies and stand_in.proxy_bypass is real.proxy_bypass
import urllib.request
from urllib.request import urlopen
assert urllib.request is real and mqtt.urllib.request is real and urlopen is real.urlopen
assert hasattr(stand_in, 'proxy_bypass') and not hasattr(stand_in, 'no_such_name')
print('ok')
"""
    assert _run(code) == "ok"


def test_a_module_already_loaded_is_not_replaced() -> None:
    code = """
import sys, urllib.request
from controller.feed.deferred import defer
real = sys.modules['urllib.request']
defer('urllib.request')
assert sys.modules['urllib.request'] is real and urllib.request is real
print('ok')
"""
    assert _run(code) == "ok"
