"""What a round was played with: rule set and pay-table version, software, devices.

Surveillance must be able to say, for any round, which rules paid it and which code and
firmware dealt it; so each round's opening record carries this (docs/journal.md). The hashes
are of content, not of names: a pay table edited without a version bump still shows.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import controller
import drivers
from controller.games.rules import GameId, GameRules
from controller.journal.record import canonical_bytes, canonical_json, to_jsonable
from controller.settlement.model import BetLimit, ProgressiveConfig, TableMemory
from controller.table.layout import DealingDevice, TableLayout
from drivers.events import DeviceIdentity

_PACKAGES = (controller, drivers)


def software() -> dict[str, Any]:
    """Version and SHA-256 over the package's ``.py`` files, plus the service's selfcheck
    verdict against the signed release manifest when it made one (:mod:`controller.selfcheck`)."""
    from controller.selfcheck.status import journal_fields

    return {**_package_digest(), **journal_fields()}


@cache
def _package_digest() -> dict[str, str]:
    """Version and SHA-256 over the installed package files (relative path and content of every
    ``.py`` file of ``controller`` and ``drivers``, in path order). Computed once per process."""
    digest = hashlib.sha256()
    for package in _PACKAGES:
        root = Path(package.__file__).resolve().parent
        for path in sorted(root.rglob("*.py")):
            relative = f"{package.__name__}/{path.relative_to(root).as_posix()}"
            digest.update(relative.encode() + b"\0" + hashlib.sha256(path.read_bytes())
                          .digest())
    return {"version": controller.__version__, "sha256": digest.hexdigest()}


def rules_provenance(rules: GameRules) -> dict[str, str]:
    """Rule set id, printed version, and SHA-256 of its catalog entry in canonical JSON."""
    return {"id": rules.id.value, "version": rules.version,
            "catalog_sha256": hashlib.sha256(canonical_bytes(to_jsonable(rules))).hexdigest()}


def plain(value: Any) -> Any:
    """Plain JSON values exactly as a record holds them once written (str Enums as str)."""
    return json.loads(canonical_json(to_jsonable(value)))


def layout_to_json(layout: TableLayout) -> dict[str, Any]:
    return plain(layout)  # type: ignore[no-any-return]


def layout_from_json(data: dict[str, Any]) -> TableLayout:
    """The layout a session was recorded with, so a replay needs nothing but the journal."""
    return TableLayout(
        game=GameId(data["game"]), device=DealingDevice(data["device"]), boxes=tuple(data["boxes"]),
        limits={bet: BetLimit(**limit) for bet, limit in data["limits"].items()},
        rounding_unit=data["rounding_unit"], table_id=data["table_id"],
        progressive=ProgressiveConfig(**data["progressive"]),
        # a LIVE session recorded before the field existed never checked burn marks: replay it
        # so (the other devices burn nothing, and the field changes nothing for them)
        burns_marked=data.get("burns_marked", data["device"] != DealingDevice.LIVE.value),
        options_deadline_s=data.get("options_deadline_s", TableLayout.options_deadline_s),
        settle_on_deal_complete=data.get("settle_on_deal_complete", False))


def memory_from_json(data: dict[str, Any]) -> TableMemory:
    return TableMemory(frozenset(data["under_minimum_players"]), data["progressive_jackpot"])


def round_provenance(layout: TableLayout, devices: dict[str, DeviceIdentity]) -> dict[str, Any]:
    """The ``provenance`` of a round's opening record."""
    layout_json = layout_to_json(layout)
    return {
        "rules": rules_provenance(layout.rules),
        "layout_sha256": hashlib.sha256(canonical_bytes(layout_json)).hexdigest(),
        "software": software(),
        "devices": {name: {"vendor": i.vendor, "model": i.model, "serial": i.serial,
                           "firmware": i.firmware_version, "firmware_hash": i.firmware_hash}
                    for name, i in sorted(devices.items())},
    }
