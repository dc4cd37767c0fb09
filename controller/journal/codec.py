"""Inputs and outputs of the table as journal records, and back.

Event sourcing needs the journal's INPUT records to turn back into the very values the table
processed: a replay that parsed them differently would "reproduce" a different game. So the
decoder is driven by the dataclasses' own type hints (cards from their codes, enums from their
values, tuples from arrays, nested dataclasses from objects), not by a second hand-written
schema that could drift from ``controller.table.commands`` and ``drivers.events``.

Record shapes (docs/journal.md, "Recording order"):

* input: event ``input_command`` or ``input_device``, payload ``{"type": class name,
  "fields": {init fields}}``, actor ``role:actor`` of a command or the device name;
* output: event :func:`event_type_of` the round event (``card_assigned``...), payload its init
  fields with ``round`` given as the journal's round number (session base + table round).
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Mapping
from enum import Enum
from functools import cache
from typing import Any

from controller.games.cards import Card, parse_card
from controller.journal.errors import JournalFormatError
from controller.journal.record import to_jsonable
from controller.table import commands as cmd
from controller.table import events as ev
from drivers import events as dev


class InputKind(str, Enum):
    """Event types of input records."""

    COMMAND = "input_command"
    DEVICE = "input_device"


INPUT_EVENT_TYPES = frozenset(kind.value for kind in InputKind)


def _classes(module: types.ModuleType, base: type) -> dict[str, type]:
    return {name: value for name, value in vars(module).items()
            if inspect.isclass(value) and issubclass(value, base) and value is not base
            and value.__module__ == module.__name__}


def _snake(name: str) -> str:
    """``CardAssigned`` -> ``card_assigned``, as :func:`event_type_of` names an instance."""
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower()
                   for i, c in enumerate(name))


COMMAND_TYPES: Mapping[str, type] = types.MappingProxyType(_classes(cmd, cmd.Command))
DEVICE_TYPES: Mapping[str, type] = types.MappingProxyType(_classes(dev, dev.DeviceEvent))
ROUND_EVENT_TYPES: Mapping[str, type] = types.MappingProxyType(
    {_snake(name): cls for name, cls in _classes(ev, ev.RoundEvent).items()})
OUTPUT_EVENT_TYPES = frozenset(ROUND_EVENT_TYPES)
"""Event types of output records: every round event the table can emit."""

# Input types that decide money: under the ``money`` policy they are fsynced before the table
# acts on them. Everything that moves a card, a wager or a decision; not link chatter.
MONEY_INPUT_TYPES = frozenset({
    "PlaceWager", "PlaceWagers", "WithdrawWager", "CloseBets", "ConfirmShuffle", "ReplaceDeck", "DeckCounted",
    "PlayerDecision", "PlayerOption", "CloseOptions", "OptionsDeadline", "ReportIrregularity",
    "SupervisorDecision", "RevealDealer", "SettleRound", "OpenRound",
    "ShuffleDone", "CardSetDispensed", "CardRead", "ForeignCard", "NoRead", "DoubleFeed",
    "FaultRaised", "DeviceOffline", "DeviceRebooted", "ProtectionReport",
})


def actor_of(item: object) -> str | None:
    """``role:actor`` for a command (``dealer:dana``), the device name for a device event."""
    if isinstance(item, cmd.Command):
        return f"{item.role.value}:{item.actor}"
    if isinstance(item, dev.DeviceEvent):
        return item.device
    return None


def encode_input(item: object) -> tuple[str, dict[str, Any]]:
    """(event type, payload) of an input record; refuses anything the table would not take."""
    if isinstance(item, cmd.Command):
        kind = InputKind.COMMAND
    elif isinstance(item, dev.DeviceEvent):
        kind = InputKind.DEVICE
    else:
        raise JournalFormatError(f"not a command or device event: {type(item).__name__}")
    return kind.value, {"type": type(item).__name__, "fields": to_jsonable(item)}


def encode_output(event: ev.RoundEvent, base: int) -> dict[str, Any]:
    """The payload of an output record: the event's fields, ``round`` offset by the session's
    base so that round numbers never repeat across controller restarts."""
    payload = to_jsonable(event)
    payload["round"] = journal_round(event.round, base)
    return payload


def journal_round(table_round: int, base: int) -> int | None:
    """The journal's round number for a table round (None before the session's first round)."""
    return None if table_round == 0 else base + table_round


def decode_input(event_type: str, payload: Mapping[str, Any]) -> object:
    """The command or device event an input record holds; :class:`JournalFormatError` names
    what does not fit (unknown type, missing or unexpected field, bad card)."""
    registry = {InputKind.COMMAND.value: COMMAND_TYPES,
                InputKind.DEVICE.value: DEVICE_TYPES}.get(event_type)
    if registry is None:
        raise JournalFormatError(f"{event_type!r} is not an input record")
    name = payload.get("type")
    cls = registry.get(name) if isinstance(name, str) else None
    fields = payload.get("fields")
    if cls is None or not isinstance(fields, Mapping):
        raise JournalFormatError(f"input record of unknown type {name!r}")
    return _build(cls, fields)


def decode_output(event_type: str, payload: Mapping[str, Any]) -> ev.RoundEvent:
    """A round event from an output record (its ``round`` is the journal's number)."""
    cls = ROUND_EVENT_TYPES.get(event_type)
    if cls is None:
        raise JournalFormatError(f"{event_type!r} is not a round event")
    return _build(cls, payload)  # type: ignore[no-any-return]


@cache
def _hints(cls: type) -> dict[str, Any]:
    module = inspect.getmodule(cls)
    namespace = dict(vars(module)) if module is not None else {}
    return typing.get_type_hints(cls, globalns=namespace)


def _build(cls: type, data: Mapping[str, Any]) -> Any:
    hints = _hints(cls)
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = set(data) - names
    if unknown:
        raise JournalFormatError(f"{cls.__name__}: unexpected field(s) {sorted(unknown)}")
    try:
        return cls(**{name: _value(hints[name], data[name]) for name in names if name in data})
    except (TypeError, ValueError) as error:
        raise JournalFormatError(f"{cls.__name__}: {error}") from error


def _value(hint: Any, value: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        if value is None:
            return None
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return _value(options[0], value)
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_value(args[0], item) for item in value)
        return tuple(_value(arg, item) for arg, item in zip(args, value, strict=True))
    if origin in (frozenset, set):
        (arg,) = typing.get_args(hint)
        return frozenset(_value(arg, item) for item in value)
    if hint is Card:
        return parse_card(value)
    if inspect.isclass(hint) and issubclass(hint, Enum):
        return hint(value)
    if inspect.isclass(hint) and dataclasses.is_dataclass(hint):
        return _build(hint, value)
    if hint is float and isinstance(value, int):
        return float(value)
    return value


__all__ = [
    "COMMAND_TYPES", "DEVICE_TYPES", "INPUT_EVENT_TYPES", "MONEY_INPUT_TYPES",
    "OUTPUT_EVENT_TYPES", "ROUND_EVENT_TYPES", "InputKind", "actor_of", "decode_input",
    "decode_output", "encode_input", "encode_output", "journal_round",
]
