"""The clock hold's way out by taps at 800x480: a table whose ``[clock]`` policy refuses new
rounds on an untrusted clock (``tablectl run --config``, RWS-3CP, a simulated shuffler) shows
the hold in words with the supervisor's override; the supervisor logs in there (the name on
the screen's own keys, the PIN on its pad), picks or types a reason, and the table opens
rounds again. No physical keyboard: every character is a tap.

This module's ``service`` fixture replaces the bench table of ``conftest.py`` (whose clock
policy is ``allow``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.web.conftest import PINS, Service, _answers_status, _stop
from tests.web.conftest import Web
from tests.web.touch import WAIT_MS, log_in, shot, tap_step, touch_page

CONFIG = """[table]
id = "WEB-CLOCK"
game = "rws-three-card-poker"

[device]
kind = "shuffler"
url = "sim"

[journal]
directory = "{journal}"
durability = "money"

[control]
socket = "{socket}"
socket_group = ""

# the casino default: no round on a clock that cannot be trusted; an error bound above 1 ms
# counts as untrusted, so even a synchronised test machine's clock holds the table
[clock]
unsynchronised = "refuse"
max_error_ms = 1
"""


@pytest.fixture(name="service", scope="module")
def clock_service_fixture(workdir: Path) -> Iterator[Service]:
    socket_path, journal = workdir / "clock.sock", workdir / "clock-journal"
    config = workdir / "clock.toml"
    config.write_text(CONFIG.format(journal=journal, socket=socket_path))
    env = {**os.environ, "XDG_STATE_HOME": str(workdir / "state")}
    process = subprocess.Popen([sys.executable, "-m", "controller", "run", "--config",
                                str(config)], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    if not _answers_status(socket_path, process):
        _stop(process)
        pytest.fail("tablectl run --config (clock refuse) did not answer")
    try:
        yield Service(socket_path, journal, process)
    finally:
        _stop(process)
        if process.stderr:
            process.stderr.close()


def type_on_keys(page: Page, keys: str, text: str) -> None:
    """Type ``text`` on the screen's own keyboard (``keys`` is its container), one tap a key:
    a capital is the shift key, then the letter."""
    for char in text:
        if char.isupper():
            page.locator(f'{keys} button[data-key="\u21e7"]').tap()
        label = "space" if char == " " else char
        page.locator(f'{keys} button[data-key="{label}"]').tap()


def test_the_clock_hold_is_overridden_by_a_supervisor_at_the_screen(
        browser: Any, web: Web, service: Service, tmp_path: Path) -> None:
    """With the clock untrusted the table refuses new rounds ([clock] refuse) and ``waits``
    offers the supervisor's override alone: the screen shows the hold with that one button
    (no Open), the supervisor logs in by taps (name on the screen's keys, PIN on the pad),
    types the reason on the screen's keys, and the table takes the override: the journal
    names the supervisor and the reason, the hold clears and the dealer opens a round."""
    status = service.call("round.status")
    if not status.get("clock_blocks"):
        pytest.skip("this host's clock is trusted even at 1 ms: no clock hold to answer")
    assert [w["way_out"] for w in status["waits"]] == [
        "tablectl supervisor clock-override --reason REASON"]
    with touch_page(browser) as page:
        log_in(page, web, "dealer1")
        hold = page.locator("#hold")
        expect(hold).to_be_visible(timeout=WAIT_MS)
        expect(page.locator("#hold-title")).to_have_text("The clock cannot be trusted")
        expect(page.locator("#actions button")).to_have_count(0)
        override = hold.locator('button[data-verb="supervisor.clock-override"]')
        expect(override).to_have_count(1)
        shot(page, "web-touch-clock-hold-800x480.png", tmp_path)
        override.tap()
        expect(page.locator("#supervisor-login")).to_be_visible()
        page.locator("#supervisor-name").tap()  # its keys replace the PIN pad
        expect(page.locator("#name-keys")).to_be_visible()
        expect(page.locator("#pin-pad")).to_be_hidden()
        type_on_keys(page, "#name-keys", "super1")
        expect(page.locator("#supervisor-name")).to_have_value("super1")
        shot(page, "web-touch-supervisor-keys-800x480.png", tmp_path)
        page.locator("#supervisor-pin").tap()
        expect(page.locator("#name-keys")).to_be_hidden()
        for digit in PINS["super1"]:
            page.locator("#pin-pad button", has_text=digit).tap()
        page.locator("#supervisor-submit").tap()
        expect(page.locator("#supervisor")).to_have_text("Supervisor super1", timeout=WAIT_MS)
        expect(page.locator("#ask")).to_be_visible()
        expect(page.locator("#ask-presets button", has_text="Clock checked")).to_have_count(1)
        type_on_keys(page, "#ask-keys", "NTP down, pit clock ok")
        expect(page.locator("#ask-input")).to_have_value("NTP down, pit clock ok")
        shot(page, "web-touch-clock-reason-800x480.png", tmp_path)
        page.locator("#ask-submit").tap()
        expect(hold).to_be_hidden(timeout=WAIT_MS)
        tap_step(page, "round.open")
        expect(page.locator("#state")).to_have_text("Place your bets", timeout=WAIT_MS)
    after = service.call("round.status")
    assert after["state"] == "betting" and not after.get("clock_blocks")
    override_record = after.get("clock_override")
    assert override_record, after
    assert "super1" in str(override_record) and "NTP down, pit clock ok" in str(override_record)
    service.call("supervisor.void", {"reason": "test cleanup"})
