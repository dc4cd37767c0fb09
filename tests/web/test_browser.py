"""The pages as a person uses them, in a real Chromium: the dealer follows a bench round as it is
dealt, a hold appears and clears, surveillance finds a voided round by its clause and reads its
timeline, an export re-verifies, a ``<script>`` in a player's or actor's name stays text, and a
wrong password is refused. Screenshots go to ``docs/`` when ``TABLECTL_SCREENSHOTS=1``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.web.conftest import PASSWORDS, Service, Web, close_and_deal

WAIT_MS = 10_000
DOCS = Path(__file__).resolve().parents[2] / "docs"
XSS = "<script>window.__xss = 1</script>"


def _shot(page: Page, name: str, tmp_path: Path) -> None:
    target = DOCS if os.environ.get("TABLECTL_SCREENSHOTS") == "1" else tmp_path
    page.screenshot(path=str(target / name))


def _login(page: Page, web: Web, name: str) -> None:
    page.goto(web.url + "/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORDS[name])
    page.click("button[type=submit]")


def _idle(service: Service) -> None:
    """Each test starts between rounds: a round left open by another is voided."""
    if service.call("round.status")["state"] not in ("idle", "settled", "voided"):
        service.call("supervisor.void", {"reason": "test cleanup"})


@pytest.fixture(name="page")
def page_fixture(browser: object, web: Web) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 720})  # type: ignore[attr-defined]
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


def test_dealer_follows_a_round_and_never_sees_the_face_down_hand(
        page: Page, web: Web, service: Service, tmp_path: Path) -> None:
    """The dealer's screen follows the round as it is dealt (server-sent events), says what to
    do next in dealer words, shows the dealer's hand only as card backs until the reveal
    (RWS-3CP 3.6), and after the reveal the hands and each wager's result."""
    _idle(service)
    _login(page, web, "dealer1")
    expect(page).to_have_url(web.url + "/dealer")
    service.call("round.open")
    expect(page.locator("#state")).to_have_text("Place your bets", timeout=WAIT_MS)
    service.call("wager.place", {"wager_id": "d1", "position": "1", "bet": "ante",
                                 "amount": 500})
    service.call("round.close")
    expect(page.locator("#next")).to_have_text("Ask box 1: play or fold", timeout=WAIT_MS)
    status = service.call("round.status")
    dealer_cards = status["hands"]["dealer"]  # the test, as root, sees them; the page must not
    assert len(dealer_cards) == 3 and all(dealer_cards)
    expect(page.locator("#dealer-hand .card.back")).to_have_count(3)
    html = page.content()
    for code in dealer_cards:
        assert f'title="{code}"' not in html, f"face-down {code} on the dealer's screen"
    for code in status["hands"]["1"]:
        expect(page.locator(f'#box-1 .card[title="{code}"]')).to_have_count(1)
    # the shuffler's own count, less the two sets it dispensed (box 1, dealer)
    assert status["device"]["cards_left"] == 52 - 2 * 3
    expect(page.locator("#device")).to_contain_text("online, 46 cards left", timeout=WAIT_MS)
    service.call("decide", {"position": "1", "choice": "play"})
    expect(page.locator("#next")).to_have_text("Reveal the dealer's hand", timeout=WAIT_MS)
    assert page.locator("#dealer-hand .card.back").count() == 3
    service.call("round.reveal")
    for code in dealer_cards:
        expect(page.locator(f'#dealer-hand .card[title="{code}"]')).to_have_count(
            1, timeout=WAIT_MS)
    service.call("round.settle")
    expect(page.locator("#state")).to_have_text("Settled", timeout=WAIT_MS)
    results = page.locator("#box-1 .result")
    expect(results).to_have_count(2, timeout=WAIT_MS)  # ante and play
    assert "RWS-3CP" in (results.first.get_attribute("title") or "")


def test_a_hold_appears_with_its_verb_and_clears(page: Page, web: Web, service: Service
                                                 ) -> None:
    """An exposed card holds the round for a supervisor: the screen says so, with the verb
    that resolves it; the supervisor's continue clears it."""
    _idle(service)
    _login(page, web, "dealer1")
    service.call("round.open")
    service.call("wager.place", {"wager_id": "h1", "position": "2", "bet": "ante",
                                 "amount": 500})
    service.call("round.close")
    expect(page.locator("#next")).to_contain_text("play or fold", timeout=WAIT_MS)
    service.call("irregularity.report", {"kind": "exposed_card", "position": "2"})
    hold = page.locator("#hold")
    expect(hold).to_be_visible(timeout=WAIT_MS)
    expect(hold).to_contain_text("A card was exposed")
    expect(hold.locator('button[data-verb="supervisor.continue"]')).to_be_visible()
    assert "tablectl" not in hold.inner_text() and "_" not in hold.inner_text()
    expect(page.locator("#next")).to_contain_text("Call a supervisor")
    service.call("supervisor.continue", {"reason": "card seen by nobody"})
    expect(hold).to_be_hidden(timeout=WAIT_MS)
    expect(page.locator("#next")).to_contain_text("play or fold")
    service.call("supervisor.void", {"reason": "test over"})


def test_console_finds_a_voided_round_by_clause_and_exports_it(
        page: Page, web: Web, service: Service, tmp_path: Path) -> None:
    """Surveillance searches voided rounds by clause, opens the round's timeline (commands with
    actor and role, the ruling with its clause, the settlement per wager, cards drawn as cards)
    and exports it; the export re-verifies against the journal on the verify page."""
    _idle(service)
    service.call("round.open")
    service.call("wager.place", {"wager_id": "v1", "position": "3", "bet": "ante",
                                 "amount": 700})
    close_and_deal(service)
    status = service.call("supervisor.void", {"reason": "count wrong", "clause":
                                              "RWS-3CP 5.1.4"})
    round_id = str(status["round"])
    _login(page, web, "surv1")
    expect(page).to_have_url(web.url + "/console")
    page.fill("input[name=clause]", "5.1.4")
    page.check("input[name=voided]")
    page.click("#search")
    link = page.locator(f'#rounds a[href="/console/round/{round_id}"]')
    expect(link).to_have_count(1, timeout=WAIT_MS)  # the index catches up within a poll
    _shot(page, "web-console.png", tmp_path)
    link.click()
    timeline = page.locator("#timeline")
    expect(timeline).to_contain_text("round_voided")
    expect(timeline.locator(".settlement .clause, .clause").first).to_contain_text("5.1.4")
    expect(timeline.locator("li.command", has_text="as supervisor").first).to_be_visible()
    expect(timeline.locator(".settlement td", has_text="returned").first).to_be_visible()
    expect(timeline.locator(".card").first).to_be_visible()
    expect(page.locator("#integrity")).to_contain_text("chain verified up to seq")
    _shot(page, "web-console-round.png", tmp_path)
    with page.expect_download() as download:
        page.click("#export-round")
    exported = tmp_path / "round.json"
    download.value.save_as(exported)
    page.goto(web.url + "/console/verify")
    page.set_input_files("#export-file", str(exported))
    page.click("#verify-export")
    expect(page.locator("#verify-result")).to_contain_text("OK:", timeout=WAIT_MS)
    tampered = tmp_path / "tampered.json"
    tampered.write_text(exported.read_text().replace('\\"amount\\":700', '\\"amount\\":7000'))
    page.set_input_files("#export-file", str(tampered))
    page.click("#verify-export")
    expect(page.locator("#verify-result")).to_contain_text("NOT VERIFIED", timeout=WAIT_MS)


def test_script_in_a_player_or_actor_name_stays_text(page: Page, web: Web, service: Service
                                                     ) -> None:
    """A journal that holds ``<script>`` in an actor and a player name renders it as text: it
    is on the page, and it never ran."""
    _idle(service)
    service.call("round.open", actor=XSS)
    service.call("wager.place", {"wager_id": "x1", "position": "4", "bet": "ante",
                                 "amount": 500, "player": XSS}, actor=XSS)
    status = service.call("supervisor.void", {"reason": XSS}, actor=XSS)
    _login(page, web, "super1")
    page.goto(f"{web.url}/console?actor={XSS}")
    link = page.locator(f'#rounds a[href="/console/round/{status["round"]}"]')
    expect(link).to_have_count(1, timeout=WAIT_MS)
    link.click()
    expect(page.locator("#timeline")).to_contain_text(XSS)
    assert page.evaluate("window.__xss") is None
    assert page.locator("#timeline script").count() == 0


def test_a_wrong_password_is_refused(page: Page, web: Web) -> None:
    """A wrong password gets the login page again with a refusal, and no session: the console
    still sends the browser to log in."""
    page.goto(web.url + "/login")
    page.fill("input[name=name]", "surv1")
    page.fill("input[name=password]", "not-the-password")
    page.click("button[type=submit]")
    expect(page.locator("#login-problem")).to_contain_text("Wrong name or password")
    page.goto(web.url + "/console")
    expect(page).to_have_url(web.url + "/login")


def test_a_dealer_does_not_see_the_console(page: Page, web: Web) -> None:
    """The dealer display role sees the dealer's screen only."""
    _login(page, web, "dealer1")
    response = page.goto(web.url + "/console")
    assert response is not None and response.status == 403


def test_the_table_deals_on_when_the_web_process_dies(web: Web, service: Service) -> None:
    """The web process is no part of the table: killed (SIGKILL, mid-watch), the table still
    opens, deals and settles a round. Last in this file: it ends the module's web process."""
    _idle(service)
    web.process.kill()
    web.process.wait(timeout=10)
    service.call("round.open")
    service.call("wager.place", {"wager_id": "k1", "position": "1", "bet": "ante",
                                 "amount": 500})
    close_and_deal(service)
    service.call("decide", {"position": "1", "choice": "fold"})
    service.call("round.reveal")
    assert service.call("round.settle")["state"] == "settled"
