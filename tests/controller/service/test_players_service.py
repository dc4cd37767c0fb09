"""Issue 23 "Players, not boxes", findings 1, 2, 3 and 6, driven through the service's own wiring
(the real :class:`Wiring` against a shuffler served on a real pty): wagers, options and answers
carry the player from the command to the journal and the settlement.

Each test failed on the main branch before the player model: the Seated Player's wager was
refused as excess (1), a Standing Player's withdrawal removed the Seated Player's hand (2), a
box took one answer only (3), and a hold during the options wiped them (6)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from controller.journal import iter_records
from controller.service.control.access import Peer
from controller.service.config import parse_config
from controller.service.errors import ConfigError
from controller.service.protocol import Role, decode_request
from controller.table import commands as cmd
from firmware_sim.faults import FaultKind, FaultSpec
from tests.controller.service.operator_rig import DEALER, SUPERVISOR, Rig, toml

LIMITS = "\n[limits.main]\nmin = 500\nmax = 10000\n"


@pytest.fixture(name="start")
def fixture_start(tmp_path: Path) -> Iterator[Any]:
    rigs: list[Rig] = []

    def start(game: str = "rws-nc-three-pictures", **kwargs: Any) -> Rig:
        rig = Rig(tmp_path, game, **kwargs)
        rigs.append(rig)
        rig.start()
        rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline", timeout=60)
        return rig

    yield start
    for rig in rigs:
        rig.close()


def place(rig: Rig, wager_id: str, position: str, amount: int, player: str,
          seated: bool | None = None) -> list[Mapping[str, Any]]:
    return rig.send(cmd.PlaceWager(**DEALER, wager_id=wager_id, position=position, bet="main",
                                   amount=amount, player=player, seated=seated))


def option(rig: Rig, position: str, player: str, choice: cmd.Option
           ) -> list[Mapping[str, Any]]:
    return rig.send(cmd.PlayerOption(**DEALER, position=position, player=player, option=choice))


def results(events: list[Mapping[str, Any]]) -> dict[str, Any]:
    settled = next(e for e in events if e["type"] == "RoundSettled")
    return {r.wager_id: r for r in settled["settlement"].results}


def journal(rig: Rig, event_type: str) -> list[Mapping[str, Any]]:
    """The records of ``event_type`` in the service's journal (read after it closed)."""
    rig.close_service()
    return [r.payload for r in iter_records([rig.tmp / "journal"])
            if r.event_type == event_type]


def test_finding_1_seated_priority_whoever_bet_first(start: Any) -> None:
    """RWS-NC3P 5.1, box maximum 10,000: a Standing Player's 8,000 came first; the Seated
    Player's 5,000 is accepted and the standing wager is cut to 5,000 (3,000 returned), so it
    is settled on 5,000, never 8,000; the journal records the reduction with the clause."""
    rig = start(extra_toml=LIMITS)
    rig.send(cmd.OpenRound(**DEALER))
    place(rig, "bob-1", "1", 8_000, "bob", seated=False)
    out = place(rig, "ann-1", "1", 5_000, "ann", seated=True)
    assert [e["type"] for e in out] == ["WagerReduced", "WagerAccepted"]
    assert {w["id"]: w["amount"] for w in rig.status()["wagers"]} == {"bob-1": 5_000,
                                                                      "ann-1": 5_000}
    rig.send(cmd.CloseBets(**DEALER))
    rig.wait("DealComplete", timeout=60)
    settled = results(rig.finish())
    assert settled["bob-1"].stake == 5_000 and abs(settled["bob-1"].net) <= 5_000
    assert settled["ann-1"].stake == 5_000
    (reduced,) = journal(rig, "wager_reduced")
    assert (reduced["wager_id"], reduced["player"], reduced["amount"], reduced["returned"],
            reduced["clause"]) == ("bob-1", "bob", 5_000, 3_000, "RWS-NC3P 5.1")


def test_finding_2_rws_options_belong_to_each_player(start: Any) -> None:
    """RWS-NC3P 5.7: Bob, standing at Ann's box 1, withdraws; Ann's hand stays in play and her
    "continue" is taken; the option record lists only Bob's wager at box 1 (his wager at box
    2 is settled, and is not listed as withdrawn)."""
    rig = start()
    rig.send(cmd.OpenRound(**DEALER))
    place(rig, "ann-1", "1", 1_000, "ann", seated=True)
    place(rig, "bob-1", "1", 1_000, "bob", seated=False)
    place(rig, "bob-2", "2", 1_000, "bob", seated=False)
    place(rig, "cat-2", "2", 1_000, "cat", seated=True)
    rig.send(cmd.CloseBets(**DEALER))
    rig.wait("DealComplete", timeout=60)
    rig.send(cmd.ReportIrregularity(**DEALER, kind=cmd.IrregularityKind.OTHER_DEALING_ERROR))
    status = rig.status()
    assert status["options_pending"] == ["1", "2"]
    assert status["options_pending_players"] == [
        {"position": "1", "player": "ann"}, {"position": "1", "player": "bob"},
        {"position": "2", "player": "bob"}, {"position": "2", "player": "cat"}]
    offered = [wait["way_out"] for wait in status["waits"]]
    for box, player in (("1", "ann"), ("1", "bob"), ("2", "bob"), ("2", "cat")):
        assert f"tablectl option {box} withdraw --player {player}" in offered
    # the dealer's `option 1 withdraw --player bob` as the control socket decodes it
    request = decode_request(json.dumps({"id": 1, "verb": "option", "actor": "dealer:dana",
                                         "args": {"position": "1", "choice": "withdraw",
                                                  "player": "bob"}}).encode())
    assert rig.wiring is not None and rig.wiring.handler is not None
    answer = rig.wiring.handler(request, Peer(None, 0, 0, Role.DEALER))
    taken = [e for e in answer["events"] if e["type"] == "PlayerOptionTaken"]
    assert [(e["player"], e["wager_ids"]) for e in taken] == [("bob", ["bob-1"])]
    assert not any(e["type"] == "HandRemoved" for e in answer["events"])
    assert option(rig, "1", "ann", cmd.Option.CONTINUE)[0]["type"] == "PlayerOptionTaken"
    option(rig, "2", "bob", cmd.Option.CONTINUE)
    option(rig, "2", "cat", cmd.Option.CONTINUE)
    settled = results(rig.finish())
    assert settled["bob-1"].outcome.value == "returned" and settled["bob-1"].rule == \
        "RWS-NC3P 5.7.3"
    for wager_id in ("ann-1", "bob-2", "cat-2"):
        assert settled[wager_id].outcome.value in ("win", "lose", "push"), wager_id
    records = journal(rig, "player_option_taken")
    assert [(r["player"], r["wager_ids"]) for r in records] == [
        ("bob", ["bob-1"]), ("ann", []), ("bob", []), ("cat", [])]
    assert journal(rig, "hand_removed") == []


def test_finding_3_mbs_r3p_5_13_1_one_answer_per_player(start: Any) -> None:
    """MBS-R3P 5.13.1: after Ann answered "continue" at box 1, Bob at the same box may still
    withdraw; his wagers are returned under 5.13.1, Ann's is settled."""
    rig = start("mbs-royal-three-pictures", auto_take=False)
    rig.send(cmd.OpenRound(**DEALER))
    place(rig, "ann-1", "1", 1_000, "ann")
    place(rig, "bob-1", "1", 1_000, "bob")
    place(rig, "cat-2", "2", 1_000, "cat")
    rig.send(cmd.CloseBets(**DEALER))
    rig.wait("CardAssigned", timeout=60)
    rig.send(cmd.ReportIrregularity(**DEALER, kind=cmd.IrregularityKind.INTERRUPTION))
    assert rig.status()["state"] == "options"
    assert option(rig, "1", "ann", cmd.Option.CONTINUE)[0]["type"] == "PlayerOptionTaken"
    out = option(rig, "1", "bob", cmd.Option.WITHDRAW)
    assert out[0]["type"] == "PlayerOptionTaken" and out[0]["wager_ids"] == ("bob-1",)
    option(rig, "2", "cat", cmd.Option.CONTINUE)
    rig.auto_take = True
    rig.sim.take_hand()
    rig.wait("DealComplete", timeout=60)
    settled = results(rig.finish())
    assert (settled["bob-1"].outcome.value, settled["bob-1"].rule) == ("returned",
                                                                       "MBS-R3P 5.13.1")
    assert settled["ann-1"].outcome.value in ("win", "lose", "push")


@pytest.mark.parametrize("jam", ["device", "reported"])
def test_finding_6_options_outlive_a_hold(start: Any, jam: str) -> None:
    """A jam during the options (the shuffler's fault, or reported by the dealer) is ruled
    (RWS-NC3P 5.4, 5.17) and continued; the options are announced again for the players still
    to answer, with their deadline, and box 2's withdrawal is taken."""
    rig = start(auto_take=False)
    rig.send(cmd.OpenRound(**DEALER))
    place(rig, "ann-1", "1", 1_000, "ann")
    place(rig, "cat-2", "2", 1_000, "cat")
    rig.send(cmd.CloseBets(**DEALER))
    rig.wait("CardAssigned", timeout=60)
    rig.send(cmd.ReportIrregularity(**DEALER, kind=cmd.IrregularityKind.OTHER_DEALING_ERROR))
    option(rig, "1", "ann", cmd.Option.CONTINUE)
    if jam == "device":
        rig.sim.inject(FaultSpec(FaultKind.JAM))
        rig.wait("SupervisorRequired", where=lambda e: e["kind"] == "jammed", timeout=60)
        rig.send(cmd.ClearDeviceFault(**SUPERVISOR, reason="jam cleared"))
    else:
        out = rig.send(cmd.ReportIrregularity(**DEALER, kind=cmd.IrregularityKind.JAMMED))
        assert any(e["type"] == "SupervisorRequired" for e in out)
    rig.send(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction.CONTINUE))
    again = rig.wait("PlayerOptionsOffered", where=lambda e: e["resumed"], timeout=60)
    assert again["deadline_s"] == 120
    status = rig.status()
    assert status["state"] == "options" and status["options_deadline_s"] == 120
    assert status["options_pending_players"] == [{"position": "2", "player": "cat"}]
    out = option(rig, "2", "cat", cmd.Option.WITHDRAW)
    assert any(e["type"] == "PlayerOptionTaken" and e["wager_ids"] == ("cat-2",) for e in out)
    rig.auto_take = True
    rig.sim.take_hand()
    rig.wait("DealComplete", timeout=60)
    settled = results(rig.finish())
    assert settled["cat-2"].outcome.value == "returned"
    assert settled["ann-1"].outcome.value in ("win", "lose", "push")


def test_finding_6_options_deadline_continues_the_unanswered(start: Any) -> None:
    """``[table] options_deadline_s``: the deadline is announced with the options and shown in
    the status; when it passes (the table thread's clock) the players who did not answer
    continue, and the journal records the deadline input and who continued."""
    rig = start(table_toml="options_deadline_s = 1\n")
    rig.send(cmd.OpenRound(**DEALER))
    place(rig, "ann-1", "1", 1_000, "ann")
    place(rig, "cat-2", "2", 1_000, "cat")
    rig.send(cmd.CloseBets(**DEALER))
    rig.wait("DealComplete", timeout=60)
    out = rig.send(cmd.ReportIrregularity(**DEALER,
                                          kind=cmd.IrregularityKind.OTHER_DEALING_ERROR))
    offered = next(e for e in out if e["type"] == "PlayerOptionsOffered")
    assert offered["deadline_s"] == 1
    option(rig, "1", "ann", cmd.Option.WITHDRAW)
    closed = rig.wait("PlayerOptionsClosed", timeout=60)
    assert "deadline" in closed["by"]
    assert [(p["position"], p["player"]) for p in closed["continuing"]] == [("2", "cat")]
    rig.until(lambda: rig.status()["state"] == "dealt", timeout=60, what="dealt")
    settled = results(rig.finish())
    assert settled["ann-1"].outcome.value == "returned"
    assert settled["cat-2"].outcome.value in ("win", "lose", "push")
    inputs = [r for r in journal(rig, "input_command") if r["type"] == "OptionsDeadline"]
    assert len(inputs) == 1 and inputs[0]["fields"]["deadline_s"] == 1


@pytest.mark.parametrize(("value", "error"), [("0", "at least 1"), ('"soon"', "integer")])
def test_options_deadline_config_errors_name_the_key(tmp_path: Path, value: str,
                                                     error: str) -> None:
    """``[table] options_deadline_s`` is a whole number of seconds, at least 1; anything else
    is refused with a one-line error naming the key; left out it is 120."""
    good = parse_config(toml(tmp_path, "rws-nc-three-pictures", "sim"), source="t.toml")
    assert good.layout().options_deadline_s == 120
    with pytest.raises(ConfigError, match=f"options_deadline_s.*{error}"):
        parse_config(toml(tmp_path, "rws-nc-three-pictures", "sim",
                          table=f"options_deadline_s = {value}\n"), source="t.toml")


@pytest.mark.parametrize("ruling", ["nobody seated", "standing over what is left",
                                    "under the minimum"])
def test_issue_34_box_limits_by_priority_through_the_service(start: Any, ruling: str) -> None:
    """Issue 34's three placement rulings (RWS-NC3P 1.15 with 5.1, 5.1, 5.2) through the
    service's own wiring, each to its settlement: what is in action is what the table allocated,
    the cut is journaled with what went back, and each result reconciles alone."""
    rig = start(extra_toml=LIMITS)
    rig.send(cmd.OpenRound(**DEALER))
    if ruling == "nobody seated":  # 1.15: the highest Bet is the Seated Player's
        place(rig, "bob-1", "1", 3_000, "bob")
        place(rig, "ann-1", "1", 8_000, "ann")
        expected, returned = {"bob-1": 2_000, "ann-1": 8_000}, {"bob-1": 1_000}
    elif ruling == "standing over what is left":
        place(rig, "ann-1", "1", 5_000, "ann", seated=True)
        place(rig, "bob-1", "1", 3_000, "bob", seated=False)
        place(rig, "cat-1", "1", 4_000, "cat", seated=False)
        expected = {"ann-1": 5_000, "bob-1": 3_000, "cat-1": 2_000}
        returned = {"cat-1": 2_000}
    else:  # 5.2: a 400 under the 500 minimum is refused, naming it
        out = place(rig, "bob-1", "1", 400, "bob")
        assert out[-1]["type"] == "CommandRefused" and "under the minimum 500" in \
            out[-1]["reason"] and "RWS-NC3P 5.2" in out[-1]["reason"]
        place(rig, "ann-1", "1", 500, "ann")
        expected, returned = {"ann-1": 500}, {}
    assert {w["id"]: w["amount"] for w in rig.status()["wagers"]} == expected
    rig.send(cmd.CloseBets(**DEALER))
    rig.wait("DealComplete", timeout=60)
    settled = results(rig.finish())
    assert {wid: r.stake for wid, r in settled.items()} == expected
    assert all(r.amount == r.stake + r.returned for r in settled.values())
    cuts = {r["wager_id"]: r["returned"] for r in journal(rig, "wager_reduced")}
    assert cuts == returned
