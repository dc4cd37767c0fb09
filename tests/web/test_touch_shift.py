"""Issue 36, done when: a shift of 30 rounds with 9 device faults, two dealer reports, a
reconstruction, a no-read and a cold start on an unsynchronised clock runs in Chromium by taps
alone.

The table is three processes (``testbed/shift/table.py``'s way): ``python -m firmware_sim
shuffler`` on a real pty, told each fault on its stdin as a faulty machine would go wrong;
``tablectl run --config`` dealing RWS-3CP from it with ``[clock] unsynchronised = "refuse"``
(and a 1 ms error bound, so even a synchronised test machine's clock is not trusted: the cold
start of a Pi after a power cut); ``tablectl web`` with a dealer and a supervisor, each with a
PIN. Debian's Chromium at 800x480, touch emulated. Every input is a tap, the dealer's login
included: a name is a button, a PIN the pad, a reason a preset, a box a button, a card the card
pad. The people follow only what the screen offers: the round's own button, Play or Fold on
each box, and for a hold or a device fault the supervisor's buttons in the order a pit
supervisor tries them (the device fixed, the question answered, continue; the void when nothing
else is offered).

Then the journal alone (``testbed/shift/audit.py``): every wager settled or returned exactly
once, every supervisor action under the supervisor in the order tapped and nobody but the two
of them commanding, and each result on the screen the journal's, on the journal's amount.

A no-read is a shoe's fault (a shuffler reads every card it forms into a hand), so the shift
ends at a second table: RWS-NC3P dealt from ``python -m firmware_sim shoe --dialect framed``
(the dealer's draws are ``draw`` lines on its stdin, the dealer's hand at the shoe), its own
``tablectl web``; the dealer logs in there by taps, a card passes the reader unread, and the
supervisor enters it on the card pad. Its journal is audited the same way."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from controller.journal.reader import iter_records
from controller.service.policy import Unsynchronised
from testbed.shift.audit import audit_records
from testbed.shift.play import plan_shift
from testbed.shift.screen import WAIT_MS, DealerScreen, ShownResult, dealer_screen
from testbed.shift.table import (
    PIN,
    SUPERVISOR,
    ShiftTable,
    shift_table,
    tell,
    web_process,
)
from tests.waiting import wait_until
from tests.web.test_touch_reconstruct import device_table
from tests.web.touch import drawn

ROUNDS = 30
FAULTS: Mapping[int, str] = {
    2: "exposed", 5: "jamhand", 8: "count:51", 11: "door", 14: "faceup", 17: "disconnect:2",
    20: "foreign", 23: "duplicate", 26: "unshuffled",
}
"""Round -> the fault the shuffler is told before the round opens (``fault SPEC``): 9 kinds."""
AT_ONCE = {"door": "#hold", "disconnect:2": "#device.bad"}
"""Faults the machine shows as soon as it is told (the others wait for its next shuffle or
hand), and where the screen shows them before the round opens: the door's fault as a hold,
the machine unplugged for 2 s as OFFLINE on the device line (issue 36: offline everywhere)."""
REPORTS: Mapping[int, str] = {4: "exposed_card", 10: "dealt_incorrectly",
                               13: "dealt_incorrectly"}
"""Round -> the report the dealer makes while players decide (issue 36's two; the wrong box
twice: once swapped, once reconstructed card by card)."""
PREFERENCE = ("supervisor.clear-fault", "supervisor.swap", "supervisor.answer",
              "supervisor.continue", "supervisor.void")
"""What a supervisor taps first among the hold's buttons."""
SHOE = 'kind = "shoe"\ndialect = "framed"\nurl = "{url}"'
"""The second table's ``[device]``: a framed dealing shoe, for the no-read."""
DEALT = "firmware_sim: dealt "
"""How the simulated shoe says, on stderr, which card came out of it."""
NC3P_CARDS = 9
"""Cards of an RWS-NC3P round at two boxes: three to each box and three to the dealer."""
RECONSTRUCT = "supervisor.reconstruct"
RECONSTRUCTED = 13
"""The round whose wrong box the supervisor answers with the reconstruction picker instead of
the swap: the first card of each of the first two boxes trade places."""
SNAPSHOT = """() => JSON.stringify({
  state: document.getElementById("state").textContent,
  next: document.getElementById("next").textContent,
  hold: [...document.querySelectorAll("#hold:not([hidden]) #hold-buttons button")]
    .map((b) => b.dataset.verb + (b.dataset.answer ? ":" + b.dataset.answer : "")),
  actions: [...document.querySelectorAll("#actions button")].map((b) => b.dataset.verb),
  choices: [...document.querySelectorAll("#boxes button.choice")]
    .map((b) => b.closest(".box").dataset.position + ":" + b.dataset.choice),
  busy: document.body.classList.contains("sending"),
  dialog: !!document.querySelector("dialog[open]"),
})"""
CHANGED = "(before) => (" + SNAPSHOT + ")() !== before"
WHERE = """(selector) => { const b = document.querySelector(selector);
  if (!b) return null; const r = b.getBoundingClientRect();
  return r.width && r.height ? {x: r.left + r.width / 2, y: r.top + r.height / 2} : null; }"""
"""The middle of a button as the screen shows it now, or null."""
READY = "(selector) => { const b = document.querySelector(selector); return !b || !b.disabled; }"
"""The button takes a tap now (the table's buttons settle a moment after they are drawn), or
it is gone."""
STEPS = ("round.close", "round.reveal", "round.settle", "options.close", "deck.counted",
         "deck.replace")
"""The round's own buttons the dealer taps when the screen offers them, in this order."""
ENDED = ("Settled", "Round void")


@pytest.fixture(name="table")
def table_fixture(tmp_path: Path) -> Iterator[ShiftTable]:
    workdir = Path(tempfile.mkdtemp(prefix="tt", dir="/tmp"))  # a socket path is short
    try:
        # a cold start: no round until a supervisor overrides the clock
        with shift_table(workdir, Unsynchronised.REFUSE, max_error_ms=1) as table:
            try:
                yield table
            finally:
                keep_evidence(table, tmp_path)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def keep_evidence(table: ShiftTable, where: Path) -> None:
    """The journals and what each process said, kept beside the test's screenshots: a shift
    that failed on a loaded machine is read afterwards, not rerun until it fails again."""
    for journal in table.workdir.glob("*journal*"):  # this table's and the shoe table's
        if journal.is_dir():
            shutil.copytree(journal, where / journal.name, dirs_exist_ok=True)
    for name in ("shuffler", "service", "web"):
        lines = list(getattr(table, name).lines)
        (where / f"{name}.log").write_text("".join(lines), encoding="utf-8")


@dataclass
class Taps:
    """The shift by taps: the dealer's screen, and what the supervisor did on it."""

    screen: DealerScreen
    reconstruct: bool = False
    """The next hold that offers a reconstruction is answered with the picker."""
    supervisor_verbs: list[str] = field(default_factory=list)
    holds_seen: list[str] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    """Every screen the people read, in order (printed when the shift fails)."""

    @property
    def page(self) -> Any:
        return self.screen.page

    def view(self) -> dict[str, Any]:
        seen: dict[str, Any] = json.loads(self.page.evaluate(SNAPSHOT))
        self.trace.append(seen)
        return seen

    def touch(self, view: dict[str, Any], selector: str) -> None:
        """A finger on the button where it is now, then the screen's answer. A finger, not
        Playwright's ``tap()``: that one retries on a button redrawn under it (a new view of
        the round arriving), and a retry after the touch did land waits for a button the
        command has already taken away. A button drawn a moment ago takes no tap yet, as a
        person reads it first: the finger waits until it does (or it is gone)."""
        self.page.wait_for_function(READY, arg=selector, timeout=WAIT_MS)
        box = self.page.evaluate(WHERE, selector)
        if box is None:  # redrawn away since the screen was read: read it again
            return
        self.page.touchscreen.tap(box["x"], box["y"])
        self.screen.taps += 1
        self.changed(view)

    def changed(self, before: dict[str, Any]) -> None:
        """Wait, bounded, until the screen shows something else. The bound is the shift's
        own, three times one effect's: what the screen waits for here may be the machine
        itself (a shuffler unplugged and found again by the driver's backoff), which took over
        30 s once beside two CPU-bound processes."""
        self.page.wait_for_function(CHANGED, arg=json.dumps(before, separators=(",", ":"),
                                                            ensure_ascii=False),
                                    timeout=3 * WAIT_MS)

    def supervisor_present(self) -> None:
        """The supervisor's login at the screen when it asks: the name's button, the PIN on
        the pad. No keyboard."""
        login = self.page.locator("#supervisor-login")
        if not login.is_visible():
            return
        self.screen.tap(self.page.locator(f'#supervisor-names button[data-name="{SUPERVISOR}"]'))
        for digit in PIN:
            self.screen.tap(self.page.locator("#pin-pad button", has_text=digit))
        self.screen.tap(self.page.locator("#supervisor-submit"))
        expect(self.page.locator("#supervisor")).to_have_text(f"Supervisor {SUPERVISOR}",
                                                              timeout=WAIT_MS)
        self.screen.supervisor_logins += 1

    def supervisor_taps(self, selector: str, verb: str, boxes: tuple[str, str] = ("1", "2"),
                        card: str | None = None) -> None:
        """A supervisor's button, the login it asks for, and what it asks next: a reason (a
        preset), the hands to reconstruct, the card of a no-read on the card pad (``card``,
        the one the supervisor holds up), or the two boxes of a swap."""
        self.screen.tap(self.page.locator(selector).first)
        self.supervisor_present()
        if self.page.locator("#ask").is_visible():
            self.screen.tap(self.page.locator("#ask-presets button").first)
            self.screen.tap(self.page.locator("#ask-submit"))
        if verb == RECONSTRUCT:
            self.reconstructs()
        elif card is not None:
            self.screen.tap(self.page.locator(f'#pick button.card-key[data-card="{card}"]'))
            self.screen.tap(self.page.locator("#pick-submit"))
        elif self.page.locator("#pick").is_visible():
            for box in boxes:
                self.screen.tap(self.page.locator(f'#pick button.to[data-box="{box}"]'))
            self.screen.tap(self.page.locator("#pick-submit"))
        self.screen.settled()
        self.supervisor_verbs.append(verb)
        self.screen.supervisor_taps.append(verb)

    def reconstructs(self) -> None:
        """The reconstruction picker: the first card of each of the first two boxes it shows
        taken to the other box (a card tapped, then the box it goes to), then Send."""
        rows = self.page.locator("#pick .hand-row[data-position]:has(button.held-card)")
        expect(rows.nth(1)).to_be_visible(timeout=WAIT_MS)
        boxes = [str(rows.nth(i).get_attribute("data-position")) for i in (0, 1)]
        first = [rows.nth(i).locator("button.held-card").first.get_attribute("data-card")
                 for i in (0, 1)]
        for card, to in ((first[0], boxes[1]), (first[1], boxes[0])):
            self.screen.tap(self.page.locator(f'#pick button.held-card[data-card="{card}"]'))
            self.screen.tap(self.page.locator(f'#pick button.to[data-box="{to}"]'))
        for box in boxes:
            expect(self.page.locator(f'#pick .hand-row[data-position="{box}"] '
                                     "button.held-card")).to_have_count(3, timeout=WAIT_MS)
        self.screen.tap(self.page.locator("#pick-submit"))

    def supervisor_leaves(self) -> None:
        if self.page.locator("#supervisor-logout").is_visible():
            self.screen.supervisor_leaves()

    def report(self, kind: str, box: str) -> None:
        """The dealer's report: Report, what happened, which box, Send."""
        self.screen.tap(self.page.locator("#report"))
        self.screen.tap(self.page.locator(f'#pick button[data-kind="{kind}"]'))
        boxes = self.page.locator(f'#pick .report-boxes button[data-box="{box}"]')
        if boxes.count():
            self.screen.tap(boxes)
        self.screen.tap(self.page.locator("#pick-submit"))
        self.screen.settled()
        expect(self.page.locator("#hold")).to_be_visible(timeout=WAIT_MS)

    def answer(self, view: dict[str, Any], boxes: list[str]) -> bool:
        """A hold or a device fault answered by the supervisor, if the screen shows one."""
        hold = view["hold"]
        if hold:
            self.holds_seen.append(self.page.locator("#hold-title").inner_text())
            preference = (RECONSTRUCT, *PREFERENCE) if self.reconstruct else PREFERENCE
            verb = next(v for p in preference for v in hold if v.startswith(p))
            name, _, answer = verb.partition(":")
            selector = f'#hold-buttons button[data-verb="{name}"]' + (
                f'[data-answer="{answer}"]' if answer else "")
            self.supervisor_taps(selector, verb, (boxes[0], boxes[1]))
            return True
        if "supervisor.clear-fault" in view["actions"]:
            self.supervisor_taps('#actions button[data-verb="supervisor.clear-fault"]',
                                 "supervisor.clear-fault")
            return True
        return False

    def open_round(self, boxes: list[str]) -> str:
        """Open the round once the table offers it (a fault armed for this round may show
        first, and is answered)."""
        for _ in range(100):
            view = self.view()
            if view["busy"] or view["dialog"]:
                self.changed(view)
            elif self.answer(view, boxes):
                continue
            elif view["state"] == "Place your bets":
                return self.page.locator("#round").inner_text().removeprefix("Round ").strip()
            elif "round.open" in view["actions"]:
                self.touch(view, '#actions button[data-verb="round.open"]')
            elif "deck.counted" in view["actions"]:
                self.touch(view, '#actions button[data-verb="deck.counted"]')
            else:
                self.changed(view)
        raise AssertionError(f"no round opened: {self.view()}")

    def play_out(self, folds: frozenset[str], report: str | None, boxes: list[str]) -> None:
        """From "Place your bets" with the wagers placed to the round's end and the next
        round's Open, by what the screen offers at each moment."""
        reported = report is None
        for _ in range(200):  # bounded: a round is some 10-20 steps, a troubled one more
            view = self.view()
            if view["busy"] or view["dialog"]:
                self.changed(view)
                continue
            if self.answer(view, boxes):
                continue
            if view["state"] in ENDED and "round.open" in view["actions"]:
                return
            elif not reported and view["choices"]:
                self.report(report or "", boxes[0])
                reported = True
            elif view["choices"]:
                position = view["choices"][0].partition(":")[0]
                wanted = "fold" if position in folds else "play"
                self.touch(view, f'#box-{position} button[data-choice="{wanted}"]')
            elif next((v for v in STEPS if v in view["actions"]), None):
                verb = next(v for v in STEPS if v in view["actions"])
                self.touch(view, f'#actions button[data-verb="{verb}"]')
            else:
                self.changed(view)
                continue
        raise AssertionError(f"the round did not end: {self.view()}")


def dealt(shoe: Any) -> list[str]:
    """The cards out of the simulated shoe so far, as it says them on stderr (``dealt QH``):
    what the dealer holds, read or not."""
    return [line.split(DEALT, 1)[1].strip() for line in list(shoe.lines) if DEALT in line]


def no_read_by_taps(browser: object, table: ShiftTable, tmp_path: Path
                    ) -> tuple[list[Any], list[ShownResult], list[str], DealerScreen]:
    """The shift's last round, at the shoe's table: the dealer logs in by taps, two boxes bet,
    the dealer confirms the shuffle and draws; the fifth card passes the reader unread and the
    round holds (no_read, RWS-NC3P 5.17); the supervisor taps "Set the order of the cards",
    logs in, and taps the card on the pad; the deal goes on, the round is revealed and
    settled by taps. The shoe's journal, the results shown, the supervisor's verbs."""
    workdir = table.workdir
    with device_table(workdir, "shoe", SHOE, "--dialect", "framed") as (service, shoe), \
            web_process(workdir, service.journal, service.socket, workdir / "accounts") \
            as (url, _), dealer_screen(browser) as screen:
        taps = Taps(screen)
        page = screen.page
        try:
            screen.log_in(url)
            round_id = taps.open_round(["1", "2"])
            for box in ("1", "2"):
                screen.place(box, [500, 500])
            screen.done_betting()
            screen.step("round.close")
            screen.step("round.shuffled")
            expect(page.locator("#state")).not_to_have_text("No more bets", timeout=WAIT_MS)
            for _ in range(4):
                tell(shoe, "draw")
            drawn(service, 4)
            tell(shoe, "fault noread")
            tell(shoe, "draw")
            expect(page.locator("#hold")).to_be_visible(timeout=WAIT_MS)
            taps.holds_seen.append(page.locator("#hold-title").inner_text())
            # the card the reader missed, in the supervisor's hand: the fifth out of the shoe
            # (a card guessed instead may come out later, and voids the round: RWS-NC3P 5.5)
            card = wait_until(lambda: dealt(shoe), "the shoe's fifth card",
                              check=lambda cards: len(cards) >= 5)[4]
            taps.supervisor_taps('#hold-buttons button[data-verb="supervisor.order"]',
                                 "supervisor.order", card=card)
            expect(page.locator("#hold")).to_be_hidden(timeout=WAIT_MS)
            for _ in range(NC3P_CARDS - 5):
                tell(shoe, "draw")
            hands = drawn(service, NC3P_CARDS)
            assert card in hands["2"], hands
            taps.play_out(frozenset(), None, ["1", "2"])
            shown = screen.results(round_id, 2)
        except Exception:
            page.screenshot(path=str(tmp_path / "failed-shoe.png"))
            print("the no-read round, the last screens read:", *taps.trace[-12:], sep="\n")
            raise
        return list(iter_records([service.journal])), shown, taps.supervisor_verbs, screen


def test_a_shift_of_30_rounds_by_taps_alone(browser: object, table: ShiftTable,
                                             tmp_path: Path) -> None:
    """The clock refuses the first round; the supervisor overrides it at the screen (a preset
    reason). Then 30 rounds of wagers by chips on 3 boxes (Pair Plus, a standing player, folds,
    RWS-3CP 3.8), 9 of them meeting a fault of the shuffler, two a dealer's report: an exposed
    card (RWS-3CP: the house's supervisor decides) and a wrong box, which the supervisor
    reconstructs by swapping the two boxes' complete hands (the house decides once the players
    hold their cards: RWS-3CP 5.1.4 is for a deal found wrong before it); a second wrong box
    is reconstructed card by card on the picker. Every round ends, settled or void; the
    journal then matches the screen and the people. Then the no-read at the shoe's table
    (:func:`no_read_by_taps`), audited the same way."""
    plans = plan_shift(ROUNDS, {})
    shown: list[ShownResult] = []
    with dealer_screen(browser) as screen:
        taps = Taps(screen)
        screen.log_in(table.url)  # the dealer's name and PIN: taps too
        page = screen.page
        expect(page.locator("#hold-title")).to_have_text("The clock cannot be trusted",
                                                         timeout=WAIT_MS)
        taps.supervisor_taps('#hold-buttons button[data-verb="supervisor.clock-override"]',
                             "supervisor.clock-override")
        expect(page.locator('#actions button[data-verb="round.open"]')).to_be_visible(
            timeout=WAIT_MS)
        taps.supervisor_leaves()
        for number, plan in enumerate(plans):
            try:
                if number in FAULTS:
                    tell(table.shuffler, f"fault {FAULTS[number]}")
                if FAULTS.get(number) in AT_ONCE:  # the screen says so before the round opens
                    expect(page.locator(AT_ONCE[FAULTS[number]])).to_be_visible(
                        timeout=WAIT_MS)
                taps.reconstruct = number == RECONSTRUCTED
                round_id = taps.open_round(plan.boxes)
                for wager in plan.wagers:
                    screen.place(wager.box, list(wager.chips), bet=wager.bet,
                                 player=wager.player)
                screen.done_betting()
                taps.play_out(plan.folds, REPORTS.get(number), plan.boxes)
            except Exception:
                page.screenshot(path=str(tmp_path / "failed.png"))
                print(f"round {number}, the last screens read:", *taps.trace[-12:],
                      page.locator("body").inner_html()[-3000:], sep="\n")
                raise
            shown.extend(screen.results(round_id, len(plan.wagers)))
            taps.supervisor_leaves()
    records = list(iter_records([table.journal]))
    ends = [r for r in records if r.event_type in ("round_settled", "round_voided")]
    assert len(ends) == ROUNDS, len(ends)
    shoe_records, shoe_shown, shoe_verbs, shoe_screen = no_read_by_taps(browser, table, tmp_path)
    # the no-read: held under RWS-NC3P 5.17, the card entered by the supervisor, settled
    no_read = audit_records(shoe_records, shoe_shown, shoe_verbs)
    assert no_read.holds == ("no_read",) and no_read.rounds_settled == 1, no_read
    assert no_read.results == no_read.wagers and no_read.screen_net == no_read.journal_net
    assert shoe_verbs == ["supervisor.order"]
    moved = [r for r in records if r.event_type == "hands_moved"]
    assert len(moved) == 2 and moved[0].payload["moves"], moved  # the swap, then the picker
    rebuilt = [r.payload["fields"]["hands"] for r in records if r.event_type == "input_command"
               and r.payload["type"] == "SupervisorDecision" and r.payload["fields"].get("hands")]
    # the picker: two boxes' hands sent, each three cards (one card of each traded)
    assert len(rebuilt) == 1 and len(rebuilt[0]) == 2, rebuilt
    assert all(len(cards) == 3 for _, cards in rebuilt[0]), rebuilt
    decided = [r.payload for r in records if r.event_type == "supervisor_decided"]
    assert [d["action"] for d in decided].count("reconstruct") == 2, decided  # both ways
    ruled = [r.payload["kind"] for r in records if r.event_type == "irregularity_ruled"]
    assert "exposed_card" in ruled and "dealt_incorrectly" in ruled, ruled
    # every supervisor's command under super1, in the order tapped: the override first
    checked = audit_records(records, shown, taps.supervisor_verbs)
    assert checked.rounds_settled + checked.rounds_voided == ROUNDS
    assert checked.results == checked.wagers and checked.screen_net == checked.journal_net
    # what the faults did: three voids by their clauses (RWS-3CP 5.1.3 a count of 51, 5.1.1
    # a foreign card, 5.1.1/5.1.3 a duplicate), holds for the house's supervisor (no clause)
    assert checked.void_clauses == ("RWS-3CP 5.1.3", "RWS-3CP 5.1.1", "RWS-3CP 5.1.1, 5.1.3")
    assert {"jammed", "not_shuffled", "dealt_incorrectly"} <= set(checked.holds)
    assert checked.holds.count("exposed_card") == 3  # the machine's, face up, the dealer's
    assert taps.supervisor_verbs[0] == "supervisor.clock-override"
    assert taps.supervisor_verbs.count("supervisor.swap") == 1
    assert taps.supervisor_verbs.count(RECONSTRUCT) == 1
    assert "supervisor.clear-fault" in taps.supervisor_verbs
    assert screen.supervisor_logins >= len(FAULTS) // 2
    print("SHIFT", json.dumps({
        "rounds": ROUNDS, "settled": checked.rounds_settled, "voided": checked.rounds_voided,
        "taps": screen.taps + shoe_screen.taps,
        "supervisor_logins": screen.supervisor_logins + shoe_screen.supervisor_logins,
        "supervisor_verbs": taps.supervisor_verbs, "holds": checked.holds,
        "void_clauses": checked.void_clauses, "wagers": checked.wagers,
        "dealer_commands": checked.dealer_commands, "net": checked.journal_net,
        "hold_titles": taps.holds_seen, "ruled": ruled,
        "no_read": {"wagers": no_read.wagers, "net": no_read.journal_net,
                    "supervisor_verbs": shoe_verbs}}))
