"""What the table offers a game server: its game, its bets, where each may stand, its limits.

A game server builds its betting screen from ``GET /v1/table`` (issue 33: "no way to read the
table's limits"), so the offer is read from the table, never from a copy in the gateway's
config: the game, the boxes and each bet's ``[limits.<bet>]`` from the table's ``round.status``
(``layout``, the service's ``tablectl.toml`` as it runs), and each bet's title, positions and
pay table from the game's rule set in the catalog (:mod:`controller.games.catalog`, the data
the table itself settles with). The table stays the judge: a wager outside this offer is
refused by it with its own reason, per wager (docs/studio.md, "Bad input")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.games.catalog import GAMES
from controller.games.rules import GameRules, LimitPolicy
from controller.service.protocol import MAX_MINOR_UNITS
from controller.studio.errors import StudioRefusal


def table_offer(status: Mapping[str, Any]) -> dict[str, Any]:
    """The offer in ``status`` (a ``round.status`` answer): ``table``, ``game`` (its id,
    rule set, title and version) and ``bets``, each ``{bet, title, clause, positions, min,
    max, pays}``. ``min``/``max`` are the amounts the table accepts at placement, in minor
    units: the bet's ``[limits.<bet>]`` where the game refuses a wager outside its limits
    (LIVE-3P: every limit is enforced at placement, interpretation 7), else any positive
    amount the wire carries. A table whose game this gateway does not know is answered
    ``503 unavailable`` (a gateway older than its table: upgrade it)."""
    game = str(status.get("game", ""))
    rules = GAMES.get(game)
    if rules is None:
        raise StudioRefusal(503, "unavailable", f"the table runs game {game!r}, which this "
                            "gateway does not know (upgrade the gateway)")
    layout = status.get("layout") or {}
    boxes = set(layout.get("boxes") or rules.positions)
    limits = layout.get("limits") or {}
    return {"table": status.get("table"),
            "game": {"id": rules.id.value, "rules": rules.cite, "title": rules.title,
                     "version": rules.version},
            "bets": [_bet(rules, bet, boxes, limits.get(bet)) for bet in rules.bets]}


def _bet(rules: GameRules, bet: str, boxes: set[str], limit: Mapping[str, int] | None
         ) -> dict[str, Any]:
    """One bet: its positions on this table's cloth (a box of its layout, or the dealer's
    position: the same test the table places by, ``_check_placement``), its amounts and its
    pay table as the rule text prints it."""
    spec = rules.bet(bet)
    low, high = 1, MAX_MINOR_UNITS
    if limit is not None and rules.limit_policy is LimitPolicy.REFUSE:
        low, high = max(1, int(limit["min"])), int(limit["max"])
    return {"bet": bet, "title": spec.title, "clause": spec.clause,
            "positions": [p for p in spec.positions if p in boxes or p == rules.dealer],
            "min": low, "max": high,
            "pays": [{"line": line.key, "title": line.label, "pays": line.describe(),
                      "clause": line.clause} for line in spec.paytable]}
