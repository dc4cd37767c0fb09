"""The console's timeline of a round shows each wager's stake as placed and what the chips did:
a voided round's settlement holds ``stake`` 0 for every returned wager (nothing stayed in
action), which the timeline once showed as the stake ("returned 0.00" for a 25.00 wager)."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.testclient import TestClient

from controller.journal.reader import iter_records
from controller.web.app import WebApp
from controller.web.auth import Authenticator, Role
from testbed.journalgen import write_synthetic_journal


def _amounts_and_voided(journal: Path) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Each wager's placed amount and each voided round's wager ids, read from the journal."""
    amounts: dict[str, int] = {}
    voided: dict[str, list[str]] = {}
    for record in iter_records(sorted(journal.glob("journal-*.jsonl"))):
        payload = record.payload
        if record.event_type == "wager_accepted":
            amounts[payload["wager"]["id"]] = payload["wager"]["amount"]
        elif record.event_type == "round_voided":
            voided[str(record.round_id)] = [r["wager_id"]
                                            for r in payload["settlement"]["results"]]
    return amounts, voided


def test_a_voided_rounds_timeline_shows_every_stake_returned(tmp_path: Path) -> None:
    """Each returned wager of a void shows its own amount, placed and returned, never 0.00."""
    journal = tmp_path / "journal"
    write_synthetic_journal(journal, 120)
    amounts, voided = _amounts_and_voided(journal)
    assert voided, "the synthetic journal voids about one round in twenty"
    round_id, wager_ids = next(iter(voided.items()))
    app = WebApp(journal_dir=journal, index_path=tmp_path / "i.sqlite", socket_path=None,
                 key=None, auth=Authenticator({}), local_role=Role.SURVEILLANCE, poll=3600)
    with TestClient(app.asgi, base_url="http://127.0.0.1") as client:
        assert app.watcher.ready.wait(60)
        page = client.get(f"/console/round/{round_id}").text
    rows = re.findall(r"<tr><td>([^<]+)</td><td class=\"stake\">([^<]+)</td><td>returned</td>"
                      r"<td>[^<]*</td><td class=\"chips\">([^<]+)</td>", page)
    assert sorted(row[0] for row in rows) == sorted(wager_ids)
    for wager_id, stake, chips in rows:
        amount = amounts[wager_id]
        shown = f"{amount // 100:,}.{amount % 100:02d}"
        assert stake == shown and chips == f"returned {shown}", (wager_id, stake, chips)
