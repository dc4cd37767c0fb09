"""The table's retained status on ``.../status``: game, round, state, devices, online.

Built only from records that have left the table, so it can never tell more than the events
stream did (no face-down card, nothing of the shuffler's or the shoe's order). ``state`` is the
last round event (``round_opened``, ``bets_closed``, ``dealer_revealed``, ``round_settled``,
...): the floor reads the round's progress without a second state machine to keep in step.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from controller.journal.record import Record

_DEVICE_EVENTS = {"DeviceOnline": True, "DeviceOffline": False}


@dataclass(slots=True)
class TableStatus:
    site: str
    table: str
    game: str | None = None
    round: str | None = None
    state: str | None = None
    devices: dict[str, bool] = field(default_factory=dict)
    seq: int = 0

    def note(self, record: Record) -> bool:
        """Learn from a published record; ``True`` when the retained status changed."""
        before = (self.game, self.round, self.state, dict(self.devices))
        self.seq = record.seq
        if record.event_type == "round_opened" and isinstance(record.payload.get("game"), str):
            self.game = record.payload["game"]
        elif record.event_type == "session_started":
            layout = record.payload.get("layout")
            if isinstance(layout, dict) and isinstance(layout.get("game"), str):
                self.game = layout["game"]
        if record.round_id is not None and not record.event_type.startswith("input_"):
            self.round, self.state = record.round_id, record.event_type
        if record.event_type == "input_device":
            online = _DEVICE_EVENTS.get(str(record.payload.get("type")))
            fields = record.payload.get("fields")
            if online is not None and isinstance(fields, dict):
                self.devices[str(fields.get("device"))] = online
        return before != (self.game, self.round, self.state, self.devices)

    def payload(self, *, online: bool) -> bytes:
        return json.dumps({"site": self.site, "table": self.table, "online": online,
                           "game": self.game, "round": self.round, "state": self.state,
                           "devices": self.devices, "seq": self.seq},
                          sort_keys=True, separators=(",", ":")).encode()
