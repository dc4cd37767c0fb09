"""Table configuration: which game, which boxes, which dealing device, limits and rounding.

The layout comes from configuration (issue 4: "the table layout ... comes from configuration"),
never from the rule text, so it is validated here once, with errors that name the problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

from controller.errors import RequestError
from controller.games.catalog import get_game
from controller.games.rules import GameId, GameRules
from controller.settlement.model import BetLimit, ProgressiveConfig


class DealingDevice(str, Enum):
    """How cards reach the hands; it decides the deal order (:mod:`controller.table.procedure`)."""

    SHUFFLER = "shuffler"
    """Hand-forming shuffler dispensing sets of three (RWS-NC3P 3.12.1, MBS-R3P 3.12,
    RWS-3CP 3.7)."""
    SHOE = "shoe"
    """Manual dealing device, one card at a time (RWS-NC3P 3.12, MBS-R3P 3.12.1, RWS-3CP 3.6)."""
    LIVE = "live"
    """The LIVE-3P studio procedure: 4 burn cards, then face up P1 -> P2 -> P3 -> Banker."""


@dataclass(frozen=True, slots=True)
class TableLayout:
    """One table as configured. ``boxes`` is the subset of the game's positions on the cloth."""

    game: GameId
    device: DealingDevice
    boxes: tuple[str, ...] = ()
    limits: Mapping[str, BetLimit] = field(default_factory=lambda: MappingProxyType({}))
    rounding_unit: int = 1
    table_id: str = "table-1"
    progressive: ProgressiveConfig = ProgressiveConfig()
    burns_marked: bool = True
    """The dealing device marks every burn card as a burn (the framed shoe's burn flag, the
    Bee-Tek's ``[Manual Burn Cards]`` section), so a card it sends unmarked while LIVE-3P burns
    are still due is a short burn (T&C 1). ``False`` for a barcode scanner, which marks
    nothing: the first four cards of a round are then the burns, whatever they are."""
    options_deadline_s: int = 120
    """How long the players' options (RWS-NC3P 5.7, MBS-R3P 5.7, 5.13.1) stay open before the
    players who have not answered continue; announced with the options and journaled."""
    settle_on_deal_complete: bool = False
    """LIVE-3P only (a studio table): settle in the same input that completes the deal, with no
    ``round.settle``; the result is submitted with the Banker's third card (docs/studio.md).
    Off, the table waits for the dealer's settle as every dealer-run table does."""

    def __post_init__(self) -> None:
        rules = get_game(GameId(self.game).value)
        if not self.boxes:
            object.__setattr__(self, "boxes", rules.positions)
        unknown = [box for box in self.boxes if box not in rules.positions]
        if unknown:
            raise RequestError(f"layout for {rules.cite}: unknown box(es) {', '.join(unknown)}; "
                               f"the game's positions are {', '.join(rules.positions)}")
        if self.game is GameId.LIVE_3P and self.device is not DealingDevice.LIVE:
            raise RequestError("LIVE-3P is dealt by the studio procedure: device must be 'live'")
        if self.game is not GameId.LIVE_3P and self.device is DealingDevice.LIVE:
            raise RequestError(f"device 'live' is the LIVE-3P procedure, not {rules.cite}")
        if self.settle_on_deal_complete and self.game is not GameId.LIVE_3P:
            raise RequestError(f"settle_on_deal_complete is for LIVE-3P studio tables; a "
                               f"{rules.cite} round is settled on the dealer's command")
        if self.game is GameId.LIVE_3P and tuple(self.boxes) != rules.positions:
            raise RequestError("LIVE-3P always deals all three Player hands (LIVE-3P Game Play)")
        if self.rounding_unit < 1:
            raise RequestError(f"rounding unit must be at least 1, got {self.rounding_unit}")
        if self.options_deadline_s < 1:
            raise RequestError(f"options deadline must be at least 1 second, got "
                               f"{self.options_deadline_s}")
        for bet in self.limits:
            rules.bet(bet)
        object.__setattr__(self, "limits", MappingProxyType(dict(self.limits)))

    @property
    def rules(self) -> GameRules:
        return get_game(GameId(self.game).value)

    @property
    def manual(self) -> bool:
        """A manual dealing device (MBS-R3P 5.8.1 depends on it); the LIVE shoe is manual too."""
        return self.device is not DealingDevice.SHUFFLER

    @classmethod
    def for_game(cls, game: str | GameId, device: str | DealingDevice | None = None,
                 **kwargs: object) -> TableLayout:
        """A layout with defaults: LIVE-3P uses its procedure, the others a shuffler."""
        game_id = GameId(game)
        if device is None:
            device = DealingDevice.LIVE if game_id is GameId.LIVE_3P else DealingDevice.SHUFFLER
        return cls(game=game_id, device=DealingDevice(device), **kwargs)  # type: ignore[arg-type]
