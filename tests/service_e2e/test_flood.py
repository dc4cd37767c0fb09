"""One account flooding refused commands journals a count, not every refusal (issue 24,
finding 7): ``tablectl run`` as systemd runs it, a client on the real control socket, the
journal read back afterwards.

On main every refused command was journaled (its input and the refusal), so a loop of refused
commands with a long ``actor`` wrote 786 MB in 10 s. Now the account (the kernel's word, not
the ``actor`` the request claims) gets ``flood_burst`` refusals journaled in full per window;
after that its commands are refused unheard and counted, and one ``flood_summary`` per window
says how many, the first and last, and when."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from controller.journal.reader import iter_records
from controller.journal.record import Record
from controller.service.control.client import RequestRefused
from controller.service.wiring.floodgate import FLOOD_SUMMARY
from controller.service.policy import DEFAULT_FLOOD_BURST
from tests.service_e2e.conftest import EVENT_SECONDS, Processes, config_toml

FLOOD = 500
"""Refused commands one client sends as fast as the socket answers."""


def _flood(service_socket: Path, count: int) -> list[str]:
    """``round.close`` with no round open (refused: bets are not open), ``count`` times, each
    under another ``actor`` (the text a request claims); the refusal messages."""
    from controller.service.control.client import ControlClient

    messages = []
    with ControlClient(service_socket, timeout=EVENT_SECONDS) as client:
        for number in range(count):
            with pytest.raises(RequestRefused) as refused:
                client.request("round.close", actor=f"dealer:{number}")
            messages.append(refused.value.message)
    return messages


def _of_account(records: list[Record]) -> list[Record]:
    """The records the flood caused: its inputs and refusals, and the summaries."""
    inputs = {r.seq for r in records if r.event_type == "input_command"
              and r.payload["type"] == "CloseBets"}
    return [r for r in records if r.seq in inputs or r.seq - 1 in inputs
            and r.event_type == "command_refused" or r.event_type == FLOOD_SUMMARY]


def test_a_flooding_account_journals_under_200_records_a_minute(processes: Processes,
                                                                tmp_path: Path) -> None:
    """500 refused commands in a few seconds (inside one minute) with the default limits:
    the first 20 journaled in full (input and refusal), the rest refused unheard, saying so,
    and counted in one summary written when the service stops: under 200 records that
    minute. Changing the ``actor`` text per request does not make a new source."""
    service = processes.service(config_toml(tmp_path, "rws-three-card-poker"))
    service.wait_ready()
    messages = _flood(service.socket, FLOOD)
    assert messages[:DEFAULT_FLOOD_BURST] == ["bets are not open (state idle)"] \
        * DEFAULT_FLOOD_BURST
    unheard = messages[DEFAULT_FLOOD_BURST:]
    assert all(m.startswith("CloseBets not handled: uid ") and "refused unheard" in m
               for m in unheard), unheard[:3]
    code, err = service.terminate()
    assert code == 0, err
    records = list(iter_records([tmp_path / "journal"]))
    flood = _of_account(records)
    first = min(r.mono_ns for r in flood)
    assert len([r for r in flood if r.mono_ns - first < 60 * 10**9]) < 200
    inputs = [r for r in records if r.event_type == "input_command"]
    assert len(inputs) == DEFAULT_FLOOD_BURST
    assert len({r.actor for r in inputs}) == DEFAULT_FLOOD_BURST  # 20 actor texts, 1 source
    (summary,) = [r for r in records if r.event_type == FLOOD_SUMMARY]
    payload = summary.payload
    assert payload["kind"] == "command_refused"
    assert (payload["journaled"], payload["suppressed"]) == (DEFAULT_FLOOD_BURST,
                                                             FLOOD - DEFAULT_FLOOD_BURST)
    assert (payload["first_reason"], payload["last_reason"]) == ("CloseBets", "CloseBets")
    assert payload["source"].startswith("uid ") and summary.actor == payload["source"]


def test_after_its_window_an_account_is_heard_again(processes: Processes,
                                                    tmp_path: Path) -> None:
    """``flood_window_s = 1``, ``flood_burst = 3``: the window's summary is journaled when it
    ends, with no further input to wake the table, and the account's next command is handled
    by the table again (here accepted)."""
    service = processes.service(config_toml(tmp_path, "rws-three-card-poker",
                                            extra="flood_burst = 3\nflood_window_s = 1\n"))
    service.wait_ready()
    messages = _flood(service.socket, 10)
    assert sum("refused unheard" in m for m in messages) == 7
    journal = tmp_path / "journal"
    end = time.monotonic() + EVENT_SECONDS
    while not list(iter_records([journal], strict=False, only={FLOOD_SUMMARY})):
        assert time.monotonic() < end, "no flood summary once the window ended"
        time.sleep(0.05)  # a bounded poll of the file, not a synchronising sleep
    (summary,) = iter_records([journal], strict=False, only={FLOOD_SUMMARY})
    assert (summary.payload["journaled"], summary.payload["suppressed"]) == (3, 7)
    with service.client() as client:
        assert client.request("round.open")["accepted"] is True
    code, err = service.terminate()
    assert code == 0, err
