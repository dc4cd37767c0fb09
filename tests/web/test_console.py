"""The surveillance console's rounds list (issue 22, item 5), in-process through the real app:
filters by table and box, local time beside UTC, card search in the README's notation, the
``fold`` result, the CSV export, damaged rounds flagged, and the surveillance video link."""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from controller.journal.policy import Durability
from controller.journal.reader import iter_records
from controller.journal.writer import JournalWriter
from controller.web.app import WebApp
from controller.web.auth import Authenticator, Role
from controller.web.config import load_web_config
from controller.web.errors import WebConfigError
from controller.web.index import JournalIndex
from controller.web.localtime import LocalZone
from controller.web.roundscsv import rounds_csv, safe_cell
from controller.web.search import RoundFilter
from controller.web.video import VideoLink
from testbed.journalgen import write_synthetic_journal

ROUND_LINK = re.compile(r'href="/console/round/([^"]+)"')
VMS = "https://vms.example/play?camera={table}&t={utc}&e={epoch}"

Console = Callable[..., TestClient]


@pytest.fixture(name="synthetic", scope="module")
def synthetic_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """40 rounds of RWS-3CP written by the journal writer (one page of the rounds list)."""
    journal = tmp_path_factory.mktemp("synthetic") / "journal"
    write_synthetic_journal(journal, 40, seed=11)
    return journal


@pytest.fixture(name="bench_journal", scope="module")
def bench_journal_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A journal written by ``tablectl bench``: the service's own wiring deals and settles
    20 rounds of RWS-3CP, players folding as the simulated players choose."""
    journal = tmp_path_factory.mktemp("bench") / "journal"
    done = subprocess.run([sys.executable, "-m", "controller", "bench", "--game",
                           "rws-three-card-poker", "--rounds", "20", "--journal-dir",
                           str(journal)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return journal


@pytest.fixture(name="console")
def console_fixture(tmp_path: Path) -> Iterator[Console]:
    """Opens the console (surveillance, loopback) over a journal; closed after the test."""
    opened: list[TestClient] = []

    def open_console(journal: Path, *, key: bytes | None = None, zone: LocalZone | None = None,
                     video: VideoLink | None = None) -> TestClient:
        app = WebApp(journal_dir=journal, index_path=tmp_path / f"i{len(opened)}.sqlite",
                     socket_path=None, key=key, auth=Authenticator({}),
                     local_role=Role.SURVEILLANCE, poll=3600, zone=zone, video=video)
        client = TestClient(app.asgi, base_url="http://127.0.0.1")  # the kiosk is loopback
        client.__enter__()
        opened.append(client)
        assert app.watcher.ready.wait(60)
        return client

    yield open_console
    for client in opened:
        client.__exit__(None, None, None)


def _listed(client: TestClient, query: str) -> set[str]:
    page = client.get("/console?" + query)
    assert page.status_code == 200
    return set(ROUND_LINK.findall(page.text))


def _rounds(journal: Path, test: Callable[[list], bool]) -> set[str]:
    by_round: dict[str, list] = {}
    for record in iter_records([journal]):
        if record.round_id is not None:
            by_round.setdefault(record.round_id, []).append(record)
    return {rid for rid, records in by_round.items() if test(records)}


def test_filter_by_box_and_by_table(synthetic: Path, console: Console) -> None:
    """``box=3`` lists exactly the rounds with a wager at box 3 (the journal says so), and
    ``table`` the rounds of that table; the list shows each round's table."""
    client = console(synthetic)
    at_box_3 = _rounds(synthetic, lambda rs: any(
        r.event_type == "wager_accepted" and r.payload["wager"]["position"] == "3" for r in rs))
    everything = _rounds(synthetic, lambda rs: True)
    assert at_box_3 and at_box_3 != everything
    assert _listed(client, "box=3") == at_box_3
    assert _listed(client, "table=T1") == everything
    assert _listed(client, "table=T2") == set()
    page = client.get("/console").text
    assert '<option >T1</option>' in page and "<td>T1</td>" in page


def test_local_time_beside_utc(synthetic: Path, console: Console) -> None:
    """Each round's start is shown in UTC and in the configured zone, rendered by the server
    (the page runs no inline script); the zone's own daylight-saving rules apply."""
    client = console(synthetic, zone=LocalZone.named("Asia/Singapore"))
    first = next(r for r in iter_records([synthetic]) if r.round_id == "1")
    local = LocalZone.named("Asia/Singapore").local(first.ts)
    assert local.endswith(" +08")
    page = client.get("/console").text
    assert "Local (Asia/Singapore)" in page and local in page
    round_page = client.get("/console/round/1").text
    assert 'id="local-time"' in round_page and local in round_page
    london = LocalZone.named("Europe/London")
    assert london.local("2026-07-01T12:00:00.5Z") == "2026-07-01 13:00:00 BST"
    assert london.local("2026-01-01T12:00:00Z") == "2026-01-01 12:00:00 GMT"
    assert load_web_config(None, timezone="Europe/London").local_zone().name == "Europe/London"
    with pytest.raises(WebConfigError, match="web.timezone 'Mars/Olympus': not a time zone"):
        load_web_config(None, timezone="Mars/Olympus")


def test_card_search_in_the_readme_notation(synthetic: Path, console: Console) -> None:
    """``10D``, ``10♦``, ``td`` and ``T♦`` are one card; ``Q♦`` is ``qd``; a rank alone
    (``T`` or ``10``) is any card of that rank; a card that cannot exist gets a clear error."""
    client = console(synthetic)

    def holding(codes: set[str]) -> set[str]:
        return _rounds(synthetic, lambda rs: any(r.event_type == "card_assigned"
                                                 and r.payload["card"] in codes for r in rs))

    ten_of_diamonds, queen_of_diamonds = holding({"TD"}), holding({"QD"})
    assert ten_of_diamonds and queen_of_diamonds
    for spelling in ("10D", "10d", "10%E2%99%A6", "td", "T%E2%99%A6"):
        assert _listed(client, "card=" + spelling) == ten_of_diamonds, spelling
    assert _listed(client, "card=Q%E2%99%A6") == _listed(client, "card=qd") == queen_of_diamonds
    any_ten = holding({"TS", "TH", "TD", "TC"})
    assert any_ten > ten_of_diamonds
    assert _listed(client, "card=T") == _listed(client, "card=10") == any_ten
    for impossible in ("1X", "11H"):
        page = client.get("/console?card=" + impossible).text
        assert f"card: not a card: &#39;{impossible}&#39;" in page, impossible


def test_fold_result_matches_folds(bench_journal: Path, console: Console) -> None:
    """A fold settles as outcome ``lose`` (RWS-3CP 3.8.1: the player loses Ante and Pair
    Plus); only the result's component says ``fold``. The ``fold`` result filter lists exactly
    the rounds where a wager was lost to a fold, from a journal the service's wiring wrote."""
    client = console(bench_journal)
    folded = _rounds(bench_journal, lambda rs: any(
        r.event_type == "round_settled" and any(
            c["label"] == "fold" for res in r.payload["settlement"]["results"]
            for c in res["components"]) for r in rs))
    decided = _rounds(bench_journal, lambda rs: any(
        r.event_type == "decision_made" and r.payload["choice"] == "fold" for r in rs))
    assert folded and folded == decided
    assert _listed(client, "result=fold") == folded
    assert _listed(client, "result=lose") >= folded


def _flagged(page: str) -> set[str]:
    return set(re.findall(r'href="/console/round/([^"]+)">[^<]*</a> <span class="damage-flag"',
                          page))


def _journal_with_text(directory: Path) -> None:
    """Two rounds whose journal text starts like spreadsheet formulas."""
    with JournalWriter(directory, table_id="T1", durability=Durability.NONE,
                       rotate_daily=False) as writer:
        for number, reason in (("1", "=HYPERLINK(\"http://evil\",\"x\")"), ("2", "+1-1")):
            writer.append("round_opened", {"game": "@SUM(A1)", "round": int(number)},
                          round_id=number)
            writer.append("wager_accepted", {"round": int(number), "wager": {
                "amount": 500, "bet": "ante", "id": f"{number}-1", "player": "-p",
                "position": "1"}}, round_id=number)
            writer.append("round_voided", {"clause": "-RWS-3CP 5.1.4", "reason": reason,
                                           "round": int(number), "settlement": {"results": [
                                               {"wager_id": f"{number}-1", "outcome": "returned",
                                                "net": -500, "rule": "x", "stake": 0}]}},
                          round_id=number)


def test_rounds_csv_is_streamed_bounded_and_formula_safe(tmp_path: Path, synthetic: Path,
                                                         console: Console) -> None:
    """The rounds list as CSV, with the page's filters: one row per round; a text cell that
    starts with ``=``, ``+``, ``-`` or ``@`` is prefixed with ``'``; numbers stay numbers;
    written batch by batch, at most the bound, saying so when more match."""
    journal = tmp_path / "formulas"
    _journal_with_text(journal)
    client = console(journal)
    reply = client.get("/console/rounds.csv")
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/csv")
    assert "attachment" in reply.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(reply.text)))
    assert [row["round"] for row in rows] == ["2", "1"]
    assert rows[1]["void_reason"] == "'=HYPERLINK(\"http://evil\",\"x\")"
    assert rows[0]["void_reason"] == "'+1-1" and rows[0]["game"] == "'@SUM(A1)"
    assert rows[0]["void_clause"] == "'-RWS-3CP 5.1.4" and rows[0]["player_net_minor"] == "-500"
    assert safe_cell("\tcmd") == "'\tcmd" and safe_cell(-5) == -5 and safe_cell("ok") == "ok"

    big = console(synthetic)
    filtered = list(csv.DictReader(io.StringIO(big.get("/console/rounds.csv?box=3").text)))
    assert {row["round"] for row in filtered} == _listed(big, "box=3")
    assert all(row["table"] == "T1" and row["began_local"] for row in filtered)
    assert big.get("/console/rounds.csv?card=1X").status_code == 400

    index = JournalIndex(synthetic, tmp_path / "csv.sqlite")
    index.update()
    try:
        chunks = rounds_csv(index, RoundFilter(), LocalZone.named("UTC"),
                            lambda ids: frozenset(), limit=10)
        assert next(chunks).startswith("round,table,began_utc")  # the header before any query
        text = "".join(chunks)
    finally:
        index.close()
    lines = text.strip().splitlines()
    assert len(lines) == 11 and lines[-1].startswith("more than 10 rounds match")


def test_damaged_round_is_flagged_in_the_list(tmp_path: Path, console: Console) -> None:
    """A round holding a record that fails its check (its content changed after it was
    hashed) is flagged DAMAGED in the list and the CSV, whether it changed after it was
    indexed or before; the others are not. A record cut
    from a round (a chain fault no line shows on its own) flags its round through the
    verifier's first problem."""
    key = bytes(range(32))
    journal = tmp_path / "journal"
    write_synthetic_journal(journal, 12, key=key)
    client = console(journal, key=key)
    assert "DAMAGED" not in client.get("/console").text
    path = sorted(journal.glob("journal-*.jsonl"))[0]
    text = path.read_text()
    line = next(line for line in text.splitlines()
                if '"event":"wager_accepted"' in line and '"round":"5"' in line)
    path.write_text(text.replace(line, line.replace('"bet":"ante"', '"bet":"pair"')))
    page = client.get("/console").text
    assert _flagged(page) == {"5"}
    rows = list(csv.DictReader(io.StringIO(client.get("/console/rounds.csv").text)))
    assert {row["round"] for row in rows if row["damaged"] == "yes"} == {"5"}
    assert _flagged(console(journal, key=key).get("/console").text) == {"5"}  # indexed so

    cut = tmp_path / "cut"
    write_synthetic_journal(cut, 12, key=key)
    path = sorted(cut.glob("journal-*.jsonl"))[0]
    lines = path.read_text().splitlines(keepends=True)
    middle = next(i for i, line in enumerate(lines)
                  if '"event":"card_assigned"' in line and '"round":"7"' in line)
    path.write_text("".join(lines[:middle] + lines[middle + 1:]))
    page = console(cut, key=key).get("/console").text
    assert "DAMAGE: missing" in page
    assert _flagged(page) == {"7"}


def test_video_link_at_the_rounds_time(synthetic: Path, console: Console) -> None:
    """With ``web.video_url`` each round links to the video at its start: the table and the
    UTC time (and Unix seconds) filled in URL-encoded; without it, no link."""
    assert "vms.example" not in console(synthetic).get("/console").text
    client = console(synthetic, video=VideoLink.parse(VMS))
    first = next(r for r in iter_records([synthetic]) if r.round_id == "1")
    utc = first.ts[:19] + "Z"
    epoch = int(first.time.timestamp())
    expected = (f"https://vms.example/play?camera=T1&amp;t={utc.replace(':', '%3A')}"
                f"&amp;e={epoch}")
    assert expected in client.get("/console").text
    assert expected in client.get("/console/round/1").text
    link = VideoLink.parse("https://vms.example/{table}/x?t={utc}")
    assert link.url("T 1/&", "2026-11-23T18:00:05.9Z") == \
        "https://vms.example/T%201%2F%26/x?t=2026-11-23T18%3A00%3A05Z"
    assert link.url(None, "2026-11-23T18:00:05Z") is None
    with pytest.raises(WebConfigError, match=r"unknown placeholder \{cam\}"):
        load_web_config(None, video_url="https://vms.example/?c={cam}")
    with pytest.raises(WebConfigError, match="not an http"):
        load_web_config(None, video_url="javascript:alert({table})")


def test_a_batchs_record_shows_each_wager_on_the_rounds_timeline(tmp_path: Path,
                                                                 console: Console) -> None:
    """A studio batch is one ``wagers_accepted`` record (issue 28): the round's timeline
    still shows every wager of it, with its box, bet, amount and member, and the round is
    found by a member's name."""
    journal = tmp_path / "journal"
    wagers = [{"id": f"gs1/w{i}", "position": f"p{1 + i % 3}", "bet": "win",
               "amount": 500 * (i + 1), "player": f"member-{i}", "seated": None}
              for i in range(4)]
    with JournalWriter(journal, table_id="S1", durability=Durability.NONE,
                       rotate_daily=False) as writer:
        writer.append("round_opened", {"game": "live-three-pictures", "round": 1},
                      round_id="1")
        writer.append("wagers_accepted", {"round": 1, "wagers": wagers}, round_id="1")
    client = console(journal)
    page = client.get("/console/round/1").text
    shown = re.findall(r'<span class="wager">([^<]+)</span>', page)
    assert [" ".join(text.split()) for text in shown] == [
        "gs1/w0: box p1 win 5.00 member-0", "gs1/w1: box p2 win 10.00 member-1",
        "gs1/w2: box p3 win 15.00 member-2", "gs1/w3: box p1 win 20.00 member-3"]
    assert _listed(client, "actor=member-2") == {"1"}
