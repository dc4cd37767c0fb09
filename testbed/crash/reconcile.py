"""What the crash campaign's journal must show, read back record by record: every wager settled
or returned exactly once, every round ended once, every round a restart interrupted ended as
its game's power-failure clause says, and where each kill left the round.

Kept apart from :mod:`testbed.crash.rig` (which runs the controllers and kills them) because it
only reads a journal: the soak and the tests call it on a finished campaign.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.journal.rounds import ACCEPTED_EVENTS, accepted_wagers


@dataclass
class Findings:
    """What :func:`check_journal` read back; every count comes from the journal alone."""

    rounds: int = 0
    settled: int = 0
    voided: int = 0
    wagers: int = 0
    staked: int = 0
    results: int = 0
    returned: int = 0
    interrupted: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    kill_phases: Counter[str] = field(default_factory=Counter)
    """Per restart, the round's phase (:class:`~controller.journal.recorder.Phase`) in the
    journal as the killed controller left it: where it died."""
    kill_sequence: list[str] = field(default_factory=list)
    """The same phases in the order of the kills (to read beside
    :attr:`testbed.crash.rig.Campaign.targets`)."""
    mid_round_kills: int = 0
    """Restarts that found a round past "No more bets" and not ended: the clauses under test."""
    recoveries_cut: int = 0
    """Kills that landed in a recovery (``recovery_started`` with no ``recovery_completed``)."""
    late_device_events: int = 0
    """Device inputs journaled after an input of a later event id from the same device boot:
    events raised before a restart and delivered after newer ones (``tests/crash`` asserts none)."""
    stale_sets: int = 0
    """``CardSetDispensed`` inputs older (by event id) than the ``ShuffleDone`` before them: a
    hand formed from an earlier deck reached a later round (``tests/crash`` asserts none)."""
    recovered_phases: Counter[str] = field(default_factory=Counter)
    """The ``phase`` of each ``recovery_completed`` after the first start. It differs from
    :attr:`kill_phases` when a kill cut a recovery short (two kills, one record) or left an
    input's outputs unrecorded (recovery records them first, then reports the later phase)."""


NOT_MID_ROUND = frozenset({"none", "betting", "settled", "voided"})
"""Phases in which nothing of the deal is at stake (betting: recovery lets betting go on, no
card is out and no clause applies)."""


CLAUSES = {
    "rws-nc-three-pictures": {(False, "void"): "RWS-NC3P 5.4.2",
                              (True, "continue"): "RWS-NC3P 5.4.1"},
    "mbs-royal-three-pictures": {(False, "player_options"): "MBS-R3P 5.13.1",
                                 (True, "continue"): "MBS-R3P 5.13.2"},
}
"""The power-failure clauses: (outcome established, ruling) -> clause."""
SUPERVISED = {
    "mbs-three-pictures": "MBS-3P (no clause; house: supervisor decides)",
    "rws-three-card-poker": "RWS-3CP (no clause; house: supervisor decides)",
}
"""Games whose rules have no power-failure clause (MBS-3P; RWS-3CP section 5 lists only voids
and 5.2): a restart mid-round holds the round for a supervisor under the house provision."""
GAMES = (*CLAUSES, *SUPERVISED)


def check_journal(directory: Path, game: str) -> Findings:
    """Reconcile: every wager accepted is settled or returned exactly once; every round ends
    once; every round a restart interrupted ends as its clause says (read from the restart's
    own input record, ``DeviceOffline`` of ``controller``, and the outputs that follow it).
    Also counts where each kill left the round (:attr:`Findings.kill_phases`)."""
    from controller.journal import iter_records
    from controller.journal.codec import OUTPUT_EVENT_TYPES, decode_output
    from controller.journal.recorder import RoundTracker

    if game not in GAMES:
        raise ValueError(f"no power-failure expectation for {game}; known: {', '.join(GAMES)}")
    found = Findings()
    placed: dict[str, int] = {}
    paid: Counter[str] = Counter()
    ends: Counter[str] = Counter()
    opened: set[str] = set()
    end_of: dict[str, str] = {}
    restarts: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    tracker = RoundTracker()  # the phase as the journal's outputs tell it, round by round
    starts = completed = 0
    newest: dict[tuple[str, int], int] = {}
    shuffled_at: dict[tuple[str, int], int] = {}
    for record in iter_records([directory]):
        payload = record.payload
        event = record.event_type
        if event == "recovery_started":
            starts += 1
            if starts > 1:  # the first is the first start, on an empty journal
                found.kill_phases[tracker.phase.value] += 1
                found.kill_sequence.append(tracker.phase.value)
        elif event == "recovery_completed" and "phase" in payload:
            completed += 1
            if completed > 1:
                found.recovered_phases[payload["phase"]] += 1
        elif event in OUTPUT_EVENT_TYPES and payload.get("round") is not None:
            tracker.see(decode_output(event, {k: v for k, v in payload.items()
                                              if k != "provenance"}))
        if event.startswith("input_"):
            fields = payload["fields"]
            current = None
            _order(found, newest, shuffled_at, payload["type"], fields)
            if payload["type"] == "DeviceOffline" and fields["device"] == "controller":
                current = {"round": record.round_id, "established": None, "ruling": "noted",
                           "clause": None}
                restarts.append(current)
        elif current is not None and event == "outcome_established":
            current["established"] = payload["established"]
        elif current is not None and event == "irregularity_ruled":
            current["ruling"], current["clause"] = payload["action"], payload["clause"]
        if event == "round_opened":
            opened.add(str(payload["round"]))
        elif event in ACCEPTED_EVENTS:
            for wager in accepted_wagers(event, payload):
                if wager["id"] in placed:
                    found.problems.append(f"wager {wager['id']} accepted twice")
                placed[wager["id"]] = wager["amount"]
        elif event == "decision_made":
            for wager in payload["play_wagers"]:
                placed[wager["id"]] = wager["amount"]
        elif event == "wager_withdrawn":
            placed.pop(payload["wager_id"], None)
        elif event in ("round_settled", "round_voided"):
            ends[str(payload["round"])] += 1
            end_of[str(payload["round"])] = (
                f"void {payload['clause']}" if event == "round_voided" else "settled")
            for result in payload["settlement"]["results"]:
                paid[result["wager_id"]] += 1
                found.results += 1
                found.returned += result["outcome"] == "returned"
    found.rounds = len(opened)
    found.settled = sum(1 for e in end_of.values() if e == "settled")
    found.voided = len(end_of) - found.settled
    found.wagers, found.staked = len(placed), sum(placed.values())
    for number in sorted(opened, key=int):
        if ends[number] != 1:
            found.problems.append(f"round {number} ended {ends[number]} times")
    for wager_id in placed:
        if paid[wager_id] != 1:
            found.problems.append(f"wager {wager_id} settled {paid[wager_id]} times")
    for wager_id in paid:
        if wager_id not in placed:
            found.problems.append(f"settlement of a wager never placed: {wager_id}")
    found.mid_round_kills = sum(n for phase, n in found.kill_phases.items()
                                if phase not in NOT_MID_ROUND)
    found.recoveries_cut = starts - completed
    expected = CLAUSES.get(game)
    for restart in restarts:
        number, ruling = restart["round"], restart["ruling"]
        found.interrupted[ruling] += 1
        if ruling == "noted":
            continue  # betting, or already held: nothing was decided by the restart
        if expected is None:
            if ruling != "supervisor":
                found.problems.append(f"round {number}: {ruling}; no clause -> supervisor")
            elif restart["clause"] != SUPERVISED[game]:
                found.problems.append(f"round {number}: held under {restart['clause']}, not "
                                      f"{SUPERVISED[game]}")
            continue
        key = (bool(restart["established"]), ruling)
        if expected.get(key) != restart["clause"]:
            found.problems.append(f"round {number}: {ruling} ({restart['clause']}) with "
                                  f"established={restart['established']} is not the clause")
        if ruling == "void" and end_of.get(number) != f"void {restart['clause']}":
            found.problems.append(f"round {number}: voided on restart, ended {end_of.get(number)}")
        if ruling == "continue" and end_of.get(number) != "settled":
            found.problems.append(f"round {number}: continued on restart, ended "
                                  f"{end_of.get(number)}")
    return found


def _order(found: Findings, newest: dict[tuple[str, int], int],
           shuffled_at: dict[tuple[str, int], int], kind: str, fields: dict[str, Any]) -> None:
    """Count device events delivered out of their device's order, and hands of an earlier deck,
    by the ``origin`` (boot id, event id) the device numbered them with."""
    origin = fields.get("origin")
    if not origin or origin.get("boot_id") is None:
        return
    key, number = (fields["device"], origin["boot_id"]), origin["event_id"]
    if number < newest.get(key, 0):
        found.late_device_events += 1
    newest[key] = max(newest.get(key, 0), number)
    if kind == "ShuffleDone":
        shuffled_at[key] = max(shuffled_at.get(key, 0), number)
    elif kind == "CardSetDispensed" and number < shuffled_at.get(key, 0):
        found.stale_sets += 1
