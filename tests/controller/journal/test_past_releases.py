"""Journals of past releases under today's code (issue 44): each replays with the verdict its
manifest states (never unexplained), reads the same under the review commands, names a
tampering as its one finding, and is resumed by the service with no damage finding; a journal
a later release wrote is refused, and nothing is appended to it.

The journals are in ``tests/journal_fixtures`` (``testbed/past_releases``), written by the
releases themselves, not by this code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.cli import main
from controller.journal import iter_records
from controller.journal.errors import JournalFromLaterRelease
from controller.journal.forms import JOURNAL_REVISION, REVISION_FIELD
from controller.journal.recorder import SESSION_STARTED
from controller.journal.replay import DivergenceKind, ReplayVerdict, replay_records
from controller.journal.startup import refuse_later_release
from controller.service.config import parse_config
from controller.service.errors import ServiceError
from testbed.past_releases import (
    PastJournal,
    extract,
    past_journals,
    records_of,
    rewrite_and_rehash,
)
from tests.controller.service.conftest import ALLOW_CLOCK, InProcessService

JOURNALS = past_journals()
EXPLAINED = [j for j in JOURNALS if j.expected == "explained"]


def _ids(journal: PastJournal) -> str:
    return journal.id


@pytest.fixture(name="journal", params=JOURNALS, ids=_ids)
def fixture_journal(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[PastJournal, Path]:
    return request.param, extract(request.param, tmp_path)


def test_the_fixtures_cover_every_game_and_two_releases() -> None:
    releases = {j.release for j in JOURNALS}
    assert {"00e7c65", "79b27de"} <= releases
    for release in releases:
        names = {j.name for j in JOURNALS if j.release == release}
        assert {f"bench-{game}" for game in (
            "rws-nc-three-pictures", "mbs-three-pictures", "mbs-royal-three-pictures",
            "rws-three-card-poker", "live-three-pictures")} <= names


def test_every_past_journal_replays_as_its_manifest_says(
        journal: tuple[PastJournal, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Reproduced, or explained by the listed rule changes it was written before: never with
    tampering's status. Every explained finding names its change."""
    about, directory = journal
    report = replay_records(iter_records([directory]))
    assert report.unexplained == [], [d.describe() for d in report.unexplained[:3]]
    assert report.verdict.value == about.expected
    assert len(report.explained) == about.explained
    assert all(d.explained_by is not None for d in report.explained)
    assert report.inputs > 0 and report.outputs_checked > 0
    status = main(["journal", "replay", str(directory)])
    assert status == (4 if about.expected == "explained" else 0)
    out = capsys.readouterr().out
    assert any(line.startswith("OK: ") for line in out.splitlines())


@pytest.mark.parametrize("about", EXPLAINED, ids=_ids)
def test_an_explained_journal_still_has_its_money_re_derived(about: PastJournal,
                                                              tmp_path: Path) -> None:
    """After an explained placement the table goes on from the journal's layout: the deal and
    every settlement after it are still compared, and reproduced."""
    report = replay_records(iter_records([extract(about, tmp_path)]))
    assert report.settlements_checked >= 1
    assert report.money_checked > 0


def _tamperer() -> Any:
    """Rewrites the journal's first settlement (a net raised by 100); a journal killed before
    any is rewritten in its first dealt card, or the player its first acceptance names."""
    settled = False

    def change(record: dict[str, Any]) -> bool:
        nonlocal settled
        if settled:
            return False
        if record["event"] == "round_settled" and record["payload"]["settlement"]["results"]:
            record["payload"]["settlement"]["results"][0]["net"] += 100
            settled = True
            return True
        return False

    return change


def _first_acceptance(record: dict[str, Any]) -> bool:
    if record["event"] == "wager_accepted" and not getattr(_first_acceptance, "done", False):
        record["payload"]["wager"]["player"] = "mallory"
        _first_acceptance.done = True  # type: ignore[attr-defined]
        return True
    return False


def _first_card(record: dict[str, Any]) -> bool:
    if record["event"] == "card_assigned" and not getattr(_first_card, "done", False):
        record["payload"]["card"] = "AS" if record["payload"]["card"] != "AS" else "KS"
        _first_card.done = True  # type: ignore[attr-defined]
        return True
    return False


@pytest.mark.parametrize("about", [j for j in JOURNALS if j.release == "00e7c65"], ids=_ids)
def test_a_record_rewritten_in_an_old_journal_is_the_one_finding(
        about: PastJournal, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The chain re-hashed as a forger without the key would: replay names the rewritten
    settlement first, and it is the only unexplained finding (no compatibility noise)."""
    directory = extract(about, tmp_path)
    seq = rewrite_and_rehash(directory, _tamperer())
    field = "net"
    if not seq:
        _first_card.done = False  # type: ignore[attr-defined]
        seq, field = rewrite_and_rehash(directory, _first_card), "card"
    if not seq:  # nothing dealt either: the player an acceptance names
        _first_acceptance.done = False  # type: ignore[attr-defined]
        seq, field = rewrite_and_rehash(directory, _first_acceptance), "player"
    assert seq
    report = replay_records(iter_records([directory]))
    assert [(d.seq, d.kind) for d in report.unexplained] == [(seq, DivergenceKind.ALTERED)]
    assert report.ordered()[0].seq == seq and field in report.ordered()[0].detail
    assert main(["journal", "replay", str(directory)]) == 1
    assert f"replay diverged at seq {seq}" in capsys.readouterr().err


def _last_session(directory: Path) -> dict[str, Any]:
    return [r.payload for r in iter_records([directory]) if r.event_type == SESSION_STARTED][-1]


def _config_for(directory: Path, tmp_path: Path) -> Any:
    session = _last_session(directory)
    layout = session["layout"]
    dialect = 'dialect = "framed"\n' if layout["device"] != "shuffler" else ""
    text = (f'[table]\nid = "{layout["table_id"]}"\ngame = "{layout["game"]}"\n\n'
            f'[device]\nkind = "{layout["device"]}"\n{dialect}'
            f'url = "/dev/table-device"\n\n[journal]\ndirectory = "{directory}"\n'
            f'\n[control]\nsocket = "{tmp_path / "control.sock"}"\nsocket_group = ""\n'
            + ALLOW_CLOCK)
    return parse_config(text, source=str(tmp_path / "tablectl.toml"))


def test_the_service_resumes_each_past_journal_with_no_damage_finding(
        journal: tuple[PastJournal, Path], tmp_path: Path) -> None:
    """The upgraded service starts on the old journal as on its own: recovery reproduces the
    last session (explained differences counted as none), nothing is held for a supervisor,
    and the next session declares today's revision."""
    _about, directory = journal
    before = sum(1 for _ in iter_records([directory]))
    config = _config_for(directory, tmp_path)
    with InProcessService(config) as running:
        report = running.service.wiring.recovery
        assert report.unproven is None
        assert [d for d in report.divergences if not d.explained] == []
        assert running.service.wiring.journal_check.damage is None
        status = running.ask("round.status")
        assert status["journal_hold"] is None
        if not report.new_session:  # a round left held: resumed as its release left it
            assert status["state"] == report.phase
            assert report.phase in ("hold", "options")
            if report.phase == "hold":
                assert status["held_for"]
    records = list(iter_records([directory]))
    assert len(records) > before
    completed = [r.payload for r in records if r.event_type == "recovery_completed"][-1]
    assert completed["divergences"] == 0
    assert not any(r.event_type == "journal_damage_found" for r in records[before:])
    if report.new_session:
        assert _last_session(directory).get(REVISION_FIELD) == JOURNAL_REVISION


def _from_a_later_release(directory: Path) -> None:
    """A session a later release would write: today's form with a revision above ours, in a
    chain that is otherwise sound (appended and hashed as that release's writer would)."""
    session = dict(_last_session(directory))
    session[REVISION_FIELD] = JOURNAL_REVISION + 1
    path, records = list(records_of(directory))[-1]
    last = records[-1]
    records.append({**last, "seq": last["seq"] + 1, "event": SESSION_STARTED,
                    "payload": session, "round": None, "actor": None})
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    rewrite_and_rehash(directory, lambda _r: False)


def test_a_journal_of_a_later_release_is_refused_and_left_untouched(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    about = next(j for j in JOURNALS if j.name == "bench-rws-nc-three-pictures")
    directory = extract(about, tmp_path)
    _from_a_later_release(directory)
    files = {p.name: p.read_bytes() for p in directory.iterdir()}
    with pytest.raises(JournalFromLaterRelease, match="later release"):
        refuse_later_release(directory)
    config = _config_for(directory, tmp_path)
    with pytest.raises(ServiceError, match=f"journal revision {JOURNAL_REVISION + 1}"):
        InProcessService(config).__enter__()
    assert {p.name: p.read_bytes() for p in directory.iterdir()} == files
    report = replay_records(iter_records([directory]))
    assert report.verdict is ReplayVerdict.LATER_RELEASE
    assert main(["journal", "replay", str(directory)]) == 2
    assert "later release" in capsys.readouterr().err


def test_a_declared_session_missing_a_field_of_its_form_is_a_finding(tmp_path: Path) -> None:
    """Shape decides only where a session declares nothing: in a session of today's revision,
    a DealingError without ``position`` is a deleted field, not an old form."""
    about = next(j for j in JOURNALS if j.release == "79b27de"
                 and j.name == "bench-rws-nc-three-pictures")
    directory = extract(about, tmp_path)

    def declare_and_delete(record: dict[str, Any]) -> bool:
        if record["event"] == SESSION_STARTED:
            record["payload"][REVISION_FIELD] = JOURNAL_REVISION
        if record["event"] == "dealing_error" and "position" in record["payload"]:
            del record["payload"]["position"]
            return True
        return False

    seq = rewrite_and_rehash(directory, declare_and_delete)
    assert seq
    report = replay_records(iter_records([directory]))
    assert report.verdict is ReplayVerdict.UNEXPLAINED
    assert report.ordered()[0].seq == seq
    assert "position: recorded (absent)" in report.ordered()[0].detail


def test_the_review_commands_read_every_past_journal(
        journal: tuple[PastJournal, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _about, directory = journal
    assert main(["journal", "verify", str(directory)]) in (0, 3)  # 3: written unkeyed
    capsys.readouterr()
    assert main(["journal", "rounds", "--json", str(directory)]) == 0
    rounds = json.loads(capsys.readouterr().out)
    assert rounds, "no round read"

