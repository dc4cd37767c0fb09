"""A whole RWS-NC3P round on the touch screen by taps alone, with a standing player: the table
is ``tablectl run --config`` for Non-Commission Three Pictures (a simulated shuffler on a real
pty) and ``tablectl web`` as processes, Chromium emulating touch at 800x480.

This module's ``service`` fixture replaces the bench table of ``conftest.py`` (RWS-3CP)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.conftest import Service, Web, _answers_status, _stop
from tests.web.touch import (WAIT_MS, assert_results_on_screen, idle, log_in, place,
                             settle_watching, tap_step, touch_page)

CONFIG = """[table]
id = "WEB-NC3P"
game = "rws-nc-three-pictures"
boxes = ["1", "2", "3", "4", "5", "6"]

[device]
kind = "shuffler"
url = "sim"

[limits.main]
min = 500
max = 100000

[journal]
directory = "{journal}"
durability = "money"

[control]
socket = "{socket}"
socket_group = ""

[clock]
unsynchronised = "allow"
"""


@pytest.fixture(name="service", scope="module")
def nc3p_service_fixture(workdir: Path) -> Iterator[Service]:
    """``tablectl run --config`` dealing RWS-NC3P from a simulated shuffler."""
    socket_path, journal = workdir / "nc.sock", workdir / "nc-journal"
    config = workdir / "nc3p.toml"
    config.write_text(CONFIG.format(journal=journal, socket=socket_path))
    env = {**os.environ, "XDG_STATE_HOME": str(workdir / "state")}
    process = subprocess.Popen([sys.executable, "-m", "controller", "run", "--config",
                                str(config)], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    if not _answers_status(socket_path, process):
        _stop(process)
        pytest.fail(f"tablectl run did not answer: {process.stderr.read()[-2000:]!r}"
                    if process.stderr else "tablectl run did not answer")
    try:
        yield Service(socket_path, journal, process)
    finally:
        _stop(process)
        if process.stderr:
            process.stderr.close()


def test_a_whole_non_commission_round_with_a_standing_player_by_taps(
        browser: Any, web: Web, service: Service) -> None:
    """Box 1: the seated player's Initial Bet and a standing player's (RWS-NC3P 1.15: players
    seated and standing at a box); box 2: an Initial Bet and a Tie Bet. No more bets, the
    shuffler deals, reveal, settle: each wager's result and amount is on its box, under its
    player, and the table recorded the standing player as standing."""
    idle(service)
    with touch_page(browser) as page:
        log_in(page, web, "dealer1")
        tap_step(page, "round.open")
        expect(page.locator("#state")).to_have_text("Place your bets", timeout=WAIT_MS)
        place(page, "1", [2500], bet="main")
        place(page, "1", [500, 500], bet="main", player="Standing 1")
        place(page, "2", [500], bet="main")
        place(page, "2", [500], bet="tie")
        wagers = service.call("round.status")["wagers"]
        assert sorted((w["position"], w["bet"], w["amount"], w["player"], w["seated"])
                      for w in wagers) == [
            ("1", "main", 1000, "box1-standing-1", False),
            ("1", "main", 2500, "box1-seated", True),
            ("2", "main", 500, "box2-seated", True), ("2", "tie", 500, "box2-seated", True)]
        page.locator("#wager-done").tap()
        tap_step(page, "round.close")
        expect(page.locator('#actions button[data-verb="round.reveal"]')).to_be_visible(
            timeout=WAIT_MS)
        hands = service.call("round.status")["hands"]
        assert all(len(hands[p]) == 3 for p in ("1", "2"))
        tap_step(page, "round.reveal")
        end = settle_watching(page, service)
        expect(page.locator("#state")).to_have_text("Settled", timeout=WAIT_MS)
        assert_results_on_screen(page, service, end)
        standing = page.locator("#box-1 .player", has_text="Standing 1")
        expect(standing.locator("li.wager .amount")).to_have_text("10.00")
        expect(standing.locator("li.wager .result")).to_have_count(1)
