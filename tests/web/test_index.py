"""The index, the search, the timeline and the export, over journals written by the journal
writer itself: incremental, rebuildable, never trusted (a journal changed under it is shown)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from controller.journal.codec import encode_output
from controller.journal.reader import iter_records
from controller.journal.record import event_type_of
from controller.journal.policy import Durability
from controller.journal.writer import JournalWriter
from controller.settlement.model import Wager
from controller.table import events as ev
from controller.web.export import build_export, journal_hashes, export_seqs, verify_export
from controller.web.index import JournalIndex
from controller.web.search import RoundFilter, overrides, recall, search_rounds
from controller.web.timeline import read_round
from testbed.journalgen import write_synthetic_journal


@pytest.fixture(name="journal")
def journal_fixture(tmp_path: Path) -> Path:
    directory = tmp_path / "journal"
    write_synthetic_journal(directory, 120, seed=7)
    return directory


@pytest.fixture(name="index")
def index_fixture(journal: Path, tmp_path: Path):
    index = JournalIndex(journal, tmp_path / "index.sqlite")
    index.update()
    yield index
    index.close()


def _rounds(journal: Path) -> dict[str, list]:
    out: dict[str, list] = {}
    for record in iter_records([journal]):
        if record.round_id is not None:
            out.setdefault(record.round_id, []).append(record)
    return out


def test_index_holds_every_record_and_grows_incrementally(journal: Path, index: JournalIndex
                                                          ) -> None:
    """Every journal record is indexed once; a later update reads only what was added."""
    total = sum(1 for _ in iter_records([journal]))
    assert index.state().records == total
    assert index.update() == 0
    write_synthetic_journal(journal, 3, seed=8)  # resumes the same journal: 3 more rounds
    added = index.update()
    assert added > 0 and index.state().records == total + added
    assert index.state().mismatch is None


def test_filters_match_what_the_journal_says(journal: Path, index: JournalIndex) -> None:
    """Each filter returns exactly the rounds whose records say so (checked against the
    records read straight from the journal)."""
    rounds = _rounds(journal)

    def expected(test) -> set[str]:
        return {rid for rid, records in rounds.items() if test(records)}

    def found(**wanted) -> set[str]:
        rows, _ = search_rounds(index, RoundFilter(**wanted), limit=10_000)
        return {row["id"] for row in rows}

    voided = expected(lambda rs: any(r.event_type == "round_voided" for r in rs))
    assert voided and found(voided=True) == voided
    clause = expected(lambda rs: any(r.event_type == "round_voided"
                                     and r.payload["clause"] == "RWS-3CP 5.1.4" for r in rs))
    assert found(clause="5.1.4", voided=True) == clause
    with_ace = expected(lambda rs: any(r.payload.get("card") == "AS" for r in rs))
    assert found(card="AS") == with_ace
    big = expected(lambda rs: any(r.event_type == "wager_accepted"
                                  and r.payload["wager"]["amount"] > 20000 for r in rs))
    assert found(amount_over=20000) == big
    chen = expected(lambda rs: any(r.event_type == "wager_accepted"
                                   and r.payload["wager"]["player"] == "chen" for r in rs))
    assert found(actor="chen") == chen
    pushes = expected(lambda rs: any(r.event_type == "round_settled" and any(
        x["outcome"] == "push" for x in r.payload["settlement"]["results"]) for r in rs))
    assert found(result="push") == pushes
    assert found(clause="%") == set()  # LIKE wildcards are text, not patterns
    assert found(actor="ch") == found(actor="chen")  # a prefix


def test_pages_do_not_overlap_and_cover_everything(index: JournalIndex) -> None:
    """Keyset paging: page after page, newest first, every round once."""
    seen: list[str] = []
    before = None
    while True:
        rows, before = search_rounds(index, RoundFilter(before=before), limit=25)
        seen += [row["id"] for row in rows]
        if before is None:
            break
    assert len(seen) == len(set(seen)) == 120


def test_recall_and_overrides(index: JournalIndex, journal: Path) -> None:
    """Recall lists the last 10 games that ended, newest first; overrides every
    ``supervisor_decided`` record."""
    last = recall(index)
    assert [row["id"] for row in last] == [str(n) for n in range(120, 110, -1)]
    decided = [r for r in iter_records([journal]) if r.event_type == "supervisor_decided"]
    assert [row["seq"] for row in overrides(index)] == sorted((r.seq for r in decided),
                                                             reverse=True)


def test_a_journal_replaced_under_the_index_is_noticed_and_rebuilt(
        journal: Path, index: JournalIndex, tmp_path: Path) -> None:
    """The index is never trusted: a different journal in the same place is a mismatch,
    shown, and the index rebuilt from the journal."""
    shutil.rmtree(journal)
    write_synthetic_journal(journal, 50, seed=99)
    index.update()
    state = index.state()
    assert state.mismatch is not None and "no longer holds" in state.mismatch
    assert state.records == sum(1 for _ in iter_records([journal]))


def test_timeline_shows_a_changed_line_as_a_mismatch(journal: Path, index: JournalIndex
                                                     ) -> None:
    """A record edited in the journal after indexing is shown as what it is (its own hash no
    longer matches), never as the index remembers it."""
    entries = read_round(index, None, "5")
    assert entries and all(e.problem is None for e in entries)
    path = journal / entries[2].file
    data = path.read_bytes().replace(entries[2].raw.encode(),
                                     entries[2].raw.replace('"v":1', '"v":2').encode())
    path.write_bytes(data)
    again = read_round(index, None, "5")
    assert again[2].record is None and again[2].problem
    assert all(e.problem is None for i, e in enumerate(again) if i != 2)


def test_export_reverifies_and_a_changed_export_does_not(journal: Path, index: JournalIndex
                                                         ) -> None:
    """An export of a round re-verifies against the journal (each record's hash recomputed
    and found there); one changed record, or a record the journal does not hold, fails."""
    document = build_export(read_round(index, None, "9"), {"round": "9"}, {})
    data = json.dumps(document).encode()
    check = verify_export(data, journal_hashes(journal, export_seqs(data)))
    assert check.ok and check.records == len(document["records"]), check.problem
    changed = dict(document, records=[document["records"][0].replace('"T1"', '"T2"'),
                                      *document["records"][1:]])
    bad = json.dumps(changed).encode()
    assert not verify_export(bad, journal_hashes(journal, export_seqs(data))).ok
    missing = verify_export(data, {})
    assert not missing.ok and "not in the journal" in (missing.problem or "")
    assert not verify_export(b"{not json", {}).ok


def test_an_export_with_a_key_given_twice_does_not_verify(journal: Path, index: JournalIndex
                                                          ) -> None:
    """Issue 35: an export is read strictly (controller.strictjson). One whose ``records``
    are given twice (a changed list, then the genuine one the plain reader kept) is not an
    export: the reviewer could be shown one list and the check made on the other."""
    document = build_export(read_round(index, None, "9"), {"round": "9"}, {})
    genuine = json.dumps(document["records"])
    forged = json.dumps([document["records"][0].replace('"T1"', '"T2"')])
    head = json.dumps({k: v for k, v in document.items() if k != "records"})
    data = (head[:-1] + f', "records": {forged}, "records": {genuine}}}').encode()
    check = verify_export(data, journal_hashes(journal, export_seqs(data)))
    assert not check.ok and "'records' appears twice" in (check.problem or "")


def test_a_batchs_wagers_accepted_record_is_searched_wager_by_wager(tmp_path: Path) -> None:
    """A studio batch is one ``wagers_accepted`` record (issue 28); the index still counts
    each wager and finds the round by each wager's player, box and amount, as it does for
    ``wager_accepted`` (surveillance sees every wager of the batch)."""
    batch = ev.WagersAccepted(round=1, wagers=(
        Wager("gs1/a", "p1", "win", 500, "m-ann"), Wager("gs1/b", "p3", "tie", 90_000, "m-bo"),
        Wager("gs1/c", "banker", "pair_plus", 1_000, "m-cy")))
    directory = tmp_path / "journal"
    with JournalWriter(directory, table_id="S1", durability=Durability.NONE,
                       rotate_daily=False) as writer:
        writer.append("round_opened", {"game": "live-three-pictures", "round": 1},
                      round_id="1")
        writer.append(event_type_of(batch), encode_output(batch, 0), round_id="1")
        writer.append("round_opened", {"game": "live-three-pictures", "round": 2},
                      round_id="2")
    index = JournalIndex(directory, tmp_path / "index.sqlite")
    try:
        index.update()

        def found(**wanted: object) -> set[str]:
            rows, _ = search_rounds(index, RoundFilter(**wanted), limit=100)
            return {row["id"] for row in rows}

        assert found() == {"1", "2"}
        assert found(actor="m-bo") == found(actor="m-cy") == {"1"}
        assert found(box="banker") == found(box="p1") == {"1"}
        assert found(amount_over=50_000) == {"1"} and found(amount_over=90_000) == set()
        rows, _ = search_rounds(index, RoundFilter(), limit=100)
        assert {row["id"]: row["wagers"] for row in rows} == {"1": 3, "2": 0}
    finally:
        index.close()
