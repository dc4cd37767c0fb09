"""``[table] settle_on_deal_complete`` (issue 28): a LIVE-3P studio table settles in the input
that completes the deal, so the result is out with the Banker's third card and no
``round.settle`` round trip delays it. Driven through the service's own wiring (``Wiring``:
driver, table thread, journal) against a Bee-Tek shoe simulator on a real pty."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from controller.journal import iter_records
from controller.journal.replay import replay_records
from controller.service.config import parse_config
from controller.service.errors import ConfigError
from controller.service.wiring.pipeline import Wiring
from controller.table import commands as cmd
from tests.controller.service.operator_rig import DEALER, toml
from tests.controller.service.test_live_burns import GAME, ShoeRig

SETTING = "settle_on_deal_complete = true"


class StudioShoeRig(ShoeRig):
    """The LIVE shoe rig with ``[table]`` keys of the test's choosing."""

    def __init__(self, tmp: Path, table_toml: str) -> None:
        super().__init__(tmp, "beetek")
        self.table_toml = table_toml

    def open_service(self) -> None:
        text = toml(self.tmp, GAME, str(self.tmp / "shoe"), self.table_toml).replace(
            'kind = "shuffler"', 'kind = "live"\ndialect = "beetek"')
        self.wiring = Wiring(parse_config(text, source=str(self.tmp / "tablectl.toml")),
                             self._publish)
        self.wiring.start()

    def deal_a_round(self) -> None:
        self.bets_closed_and_shuffled()
        for _ in range(4):
            self.draw(burn=True)
        for _ in range(12):
            self.draw(burn=False)
        self.wait("DealComplete")


@pytest.fixture(name="make_rig")
def fixture_make_rig(tmp_path: Path) -> Iterator[Any]:
    made: list[StudioShoeRig] = []

    def make(table_toml: str) -> StudioShoeRig:
        rig = StudioShoeRig(tmp_path, table_toml)
        made.append(rig)
        rig.start()
        rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline")
        return rig

    yield make
    for rig in made:
        rig.close()


def _of(rig: ShoeRig, kind: str) -> list[Mapping[str, Any]]:
    return [e for e in rig.published if e.get("type") == kind]


def _settled_records(rig: ShoeRig) -> list[Any]:
    return [r for r in iter_records([rig.tmp / "journal"]) if r.event_type == "round_settled"]


def test_with_the_setting_the_round_settles_with_the_last_card_once(make_rig: Any) -> None:
    """Settled in the input of the Banker's third card, with no settle request: the journal's
    ``round_settled`` follows that card's records directly, holding each wager's stake and
    result; a late ``round.settle`` is refused, naming why, and nothing is settled twice;
    the journal replays to the same outputs."""
    rig = make_rig(SETTING)
    rig.deal_a_round()
    settled = rig.wait("RoundSettled")
    assert rig.status()["state"] == "settled"
    (result,) = settled["settlement"]["results"]
    assert (result["wager_id"], result["stake"]) == ("w1", 1000)
    assert result["outcome"] in ("win", "lose", "push")
    late = rig.send(cmd.SettleRound(**DEALER))
    assert [e["type"] for e in late] == ["CommandRefused"]
    assert "settled once, when its deal completed" in late[0]["reason"]
    assert len(_of(rig, "RoundSettled")) == 1
    rig.close_service()
    records = list(iter_records([rig.tmp / "journal"]))
    kinds = [r.event_type for r in records]
    last_card = max(i for i, kind in enumerate(kinds) if kind == "card_assigned")
    assert kinds[last_card + 1:last_card + 4] == ["hand_complete", "deal_complete",
                                                   "round_settled"]
    (record,) = _settled_records(rig)
    assert {k: v for k, v in settled.items() if k != "type"} == record.payload, \
        "the watchers get the settlement exactly as the journal holds it"
    assert replay_records(records).divergences == []


def test_without_the_setting_the_round_waits_for_the_dealers_settle(make_rig: Any) -> None:
    """The default, a dealer-run table: the complete deal waits (state ``revealed``) and the
    round settles on the dealer's command, once."""
    rig = make_rig("")
    rig.deal_a_round()
    assert rig.status()["state"] == "revealed"
    assert _of(rig, "RoundSettled") == []
    assert [e["type"] for e in rig.send(cmd.SettleRound(**DEALER))] == ["RoundSettled"]
    assert "cannot be settled in state settled" in rig.send(
        cmd.SettleRound(**DEALER))[0]["reason"]
    rig.close_service()
    assert len(_settled_records(rig)) == 1


@pytest.mark.parametrize(("game", "kind", "value", "words"), [
    ("rws-nc-three-pictures", "shuffler", "true", "only a LIVE-3P studio table"),
    (GAME, "live", '"yes"', "must be true or false"),
])
def test_the_setting_is_checked(tmp_path: Path, game: str, kind: str, value: str,
                                words: str) -> None:
    """Only a LIVE-3P table may settle with the last card (every other game's round is
    settled on the dealer's command); the value is a boolean."""
    text = toml(tmp_path, game, "/dev/table-device",
                f"settle_on_deal_complete = {value}").replace(
        'kind = "shuffler"', f'kind = "{kind}"' + ('\ndialect = "beetek"' if kind == "live"
                                                  else ""))
    with pytest.raises(ConfigError) as error:
        parse_config(text, source="t.toml")
    assert "settle_on_deal_complete" in str(error.value) and words in str(error.value)
