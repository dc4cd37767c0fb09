"""The dealer's reports on the screen (issue 36): the kinds ``round.status`` ``waits`` offers
(``controller/service/wiring/liveness.py`` decides which, by the round's state), each in a
dealer's words, with the boxes the dealer may name. Split from :mod:`controller.web.dealer`,
which composes it. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from controller.games.rules import GameRules
from controller.web.dealer_actions import PLACEHOLDER, commands_in
from controller.web.dealer_words import KIND_WORDS, REPORT_WORDS, plain


def report_choices(waits: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The dealer's reports the waits offer (``tablectl report exposed_card --position POS
    --source dealer``, one wait per kind, in the table's order): each kind once, with
    whether the dealer picks a box (``POS``), the box the table names, and the source. An
    empty list when the waits offer none: the screen then shows no Report button."""
    found: dict[str, dict[str, Any]] = {}
    for wait in waits:
        for words in commands_in(str(wait.get("way_out") or "")):
            if words[0] != "report" or len(words) < 2 or PLACEHOLDER.match(words[1]):
                continue
            kind = words[1].replace("-", "_")
            options = dict(zip(words[2::2], words[3::2]))
            position = options.get("--position")
            found.setdefault(kind, {
                "kind": kind,
                "pick_box": position is not None and bool(PLACEHOLDER.match(position)),
                "position": None if position is None or PLACEHOLDER.match(position)
                else position,
                "source": options.get("--source")})
    return list(found.values())


def report_view(waits: Sequence[Mapping[str, Any]], shown: Mapping[str, Any],
                rules: GameRules | None, layout_boxes: Sequence[str]) -> list[dict[str, Any]]:
    """The dealer's reports ``waits`` offers (none, no Report button), each kind in words
    with the boxes the dealer may name: the boxes with a wager this round, and the dealer."""
    choices = report_choices(waits)
    if not choices:
        return []
    dealer = rules.dealer if rules else "dealer"
    betting = {str(w.get("position")) for w in shown.get("wagers") or []
               if isinstance(w, Mapping)}
    order = list(layout_boxes) or list(rules.positions if rules else ())
    boxes = [{"position": p, "label": f"Box {p}"} for p in order if p in betting]
    boxes.append({"position": dealer, "label": "Dealer"})
    return [{**choice, "boxes": boxes if choice["pick_box"] else [],
             "words": REPORT_WORDS.get(choice["kind"]) or KIND_WORDS.get(choice["kind"])
             or plain(choice["kind"]).capitalize()} for choice in choices]
