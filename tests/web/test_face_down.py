"""No face-down card reaches a console viewer who may not see it (issue 24, finding 1).

``tablectl run`` (the bench table, RWS-3CP) and ``tablectl web`` as processes; a round is dealt
and left in ``decisions``, the dealer's hand face down (RWS-3CP 3.6). Each web account walks
every console page, both exports, a card search for each of the dealer's cards, the overrides
and recall pages, the dealer's state and the verify page (as an oracle for a guessed record).
The Pit Supervisor and the dealer get none of the dealer's cards; surveillance does (which also
proves the records were indexed, so the check could fail). After the reveal the supervisor sees
them. The same rule on the control socket and in ``watch`` is tested per role in
``tests/controller/service/test_visibility.py``; the feed's, in
``tests/controller/feed/test_horizon.py``.
"""

from __future__ import annotations

import http.cookiejar
import json
import re
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from tests.web.conftest import PASSWORDS, Service, Web, close_and_deal

WAIT_SECONDS = 30.0
SUITS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}


class Browser:
    """A logged-in HTTP session (cookie jar, no redirects hidden from the test)."""

    def __init__(self, web: Web, name: str) -> None:
        self.web = web
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.opener.addheaders = [("Origin", web.url)]  # as a browser sends on a POST
        form = urllib.parse.urlencode({"name": name, "password": PASSWORDS[name]}).encode()
        with self.opener.open(web.url + "/login", data=form, timeout=30) as answer:
            assert answer.status == 200

    def get(self, path: str, data: bytes | None = None) -> str:
        try:
            with self.opener.open(self.web.url + path, data=data, timeout=30) as answer:
                return answer.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as error:  # a 403 or 400 page is still a page to read
            return error.read().decode("utf-8", "replace")


def _shows(text: str, code: str) -> bool:
    """Whether ``text`` shows card ``code`` (``QD``) as a code or as drawn (``Q♦``)."""
    rank = "10" if code[0] == "T" else code[0]
    # A token's characters are no boundary: a random CSRF token or session id may hold "QD".
    return bool(re.search(rf"(?<![A-Za-z0-9_-]){code}(?![A-Za-z0-9_-])", text)) \
        or f"{rank}{SUITS[code[1]]}" in text


def _pages(round_id: str, cards: list[str]) -> list[str]:
    now = datetime.now(UTC)
    span = urllib.parse.urlencode({
        "since": (now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S"),
        "until": (now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")})
    return ["/console", f"/console/round/{round_id}", f"/console/export?round={round_id}",
            f"/console/export?{span}", "/console/recall", "/console/overrides",
            "/console/verify", "/dealer", "/dealer/state",
            *(f"/console?card={code}" for code in cards),
            *(f"/console/rounds.csv?card={code}" for code in cards)]


def _found_by_card(text: str, round_id: str) -> bool:
    """A round in a search's results: its link on the page, or its id first in a CSV row."""
    return f'href="/console/round/{round_id}"' in text or f"\r\n{round_id}," in text


@pytest.fixture(name="in_decisions")
def in_decisions_fixture(service: Service) -> Iterator[tuple[str, list[str], list[str]]]:
    """A round in ``decisions``: its id, the dealer's cards, box 1's cards (as root sees them)."""
    if service.call("round.status")["state"] not in ("idle", "settled", "voided"):
        service.call("supervisor.void", {"reason": "test cleanup"})
    service.call("round.open")
    service.call("wager.place", {"wager_id": "fd1", "position": "1", "bet": "ante",
                                 "amount": 500})
    close_and_deal(service)
    status = service.call("round.status")
    assert status["state"] == "decisions"
    yield str(status["round"]), list(status["hands"]["dealer"]), list(status["hands"]["1"])
    if service.call("round.status")["state"] not in ("idle", "settled", "voided"):
        service.call("supervisor.void", {"reason": "test cleanup"})


def _until_surveillance_sees(web: Web, round_id: str, card: str) -> None:
    """The index catches up within a poll of the journal: wait (bounded) until surveillance's
    round page shows the dealer's card, so the other roles' pages are read from the same
    records."""
    surveillance = Browser(web, "surv1")
    done = threading.Event()
    deadline = datetime.now(UTC) + timedelta(seconds=WAIT_SECONDS)
    while datetime.now(UTC) < deadline:
        if _shows(surveillance.get(f"/console/round/{round_id}"), card):
            return
        done.wait(0.2)
    pytest.fail(f"surveillance never saw the dealer's {card} on round {round_id}'s page")


def test_no_face_down_card_on_any_page_or_export_before_the_reveal(
        web: Web, service: Service, in_decisions: tuple[str, list[str], list[str]]) -> None:
    round_id, dealer, box = in_decisions
    assert len(dealer) == 3 and all(dealer)
    _until_surveillance_sees(web, round_id, dealer[0])
    surveillance = Browser(web, "surv1")
    full_export = surveillance.get(f"/console/export?round={round_id}")
    assert all(_shows(full_export, code) for code in dealer)
    assert _found_by_card(surveillance.get(f"/console?card={dealer[0]}"), round_id)
    assert _found_by_card(surveillance.get(f"/console/rounds.csv?card={dealer[0]}"), round_id)
    for name in ("super1", "dealer1"):
        viewer = Browser(web, name)
        for path in _pages(round_id, dealer):
            text = viewer.get(path)
            if "card=" in path:  # the search form echoes the card asked for: look at results
                assert not _found_by_card(text, round_id), f"{name} finds the round by {path}"
                continue
            # the card search's example ("QD, 10h, T") is the page's own text, not a card:
            # with QD in the dealer's hand (3 deals in 52) it failed here as a leak
            shown = re.sub(r'placeholder="[^"]*"', "", text)
            leaked = [code for code in dealer if _shows(shown, code)]
            assert not leaked, f"{name} sees face-down {leaked} on {path}"
        # the verify page is no oracle: surveillance's export (which holds the face-down
        # records) is not confirmed to a supervisor before the reveal
        answer = json.loads(viewer.get("/console/verify", full_export.encode())) \
            if name == "super1" else None
        if answer is not None:
            assert answer["ok"] is False and "not in the journal" in answer["text"]
    supervisor = Browser(web, "super1")
    page = supervisor.get(f"/console/round/{round_id}")
    assert 'id="withheld"' in page
    assert any(_shows(page, code) for code in box), "the player's cards are not face down"
    round_export = json.loads(supervisor.get(f"/console/export?round={round_id}"))
    assert round_export["selection"]["withheld_from_seq"] > 0
    assert round_export["journal"]["verified_hash"] is None or \
        round_export["journal"]["verified_to_seq"] < round_export["selection"][
            "withheld_from_seq"]
    leaked_in_log = [code for code in dealer for line in web.lines if _shows(line, code)]
    assert not leaked_in_log, f"the web process logged face-down {leaked_in_log}"


def test_the_supervisor_sees_the_dealer_hand_after_the_reveal(
        web: Web, service: Service, in_decisions: tuple[str, list[str], list[str]]) -> None:
    round_id, dealer, _ = in_decisions
    service.call("decide", {"position": "1", "choice": "fold"})
    service.call("round.reveal")
    supervisor = Browser(web, "super1")
    done = threading.Event()
    deadline = datetime.now(UTC) + timedelta(seconds=WAIT_SECONDS)
    while datetime.now(UTC) < deadline:
        page = supervisor.get(f"/console/round/{round_id}")
        if all(_shows(page, code) for code in dealer):
            assert 'id="withheld"' not in page
            return
        done.wait(0.2)
    pytest.fail("the supervisor never saw the revealed dealer hand")
