"""``tablectl probe``: is a shuffler or shoe there, who is it, and what does it say?

For a shuffler (or a framed shoe) it prints the identity and status; for a shoe it then prints the
cards and other events read during ``--seconds``. When nothing answers it exits non-zero with one
line within 5 s, which is what an installer needs at the table with a laptop. ``--json`` prints one
object per line per event, cards as two-character codes.
"""

from __future__ import annotations

import argparse
import dataclasses
import queue
import time
from enum import Enum
from typing import Any

from controller.cli.output import print_json
from controller.games.cards import Card
from drivers.errors import OpenFailed
from drivers.events import DeviceEvent

CONNECT_SECONDS = 2.0
_EVENT_NAMES = {
    "CardRead": "card", "NoRead": "no_read", "DoubleFeed": "double_feed",
    "ForeignCard": "foreign_card", "ButtonPressed": "button", "FaultRaised": "fault_raised",
    "FaultCleared": "fault_cleared", "DeviceOnline": "online", "DeviceOffline": "offline",
    "DeviceRebooted": "rebooted", "LinkError": "link_error", "ShuffleDone": "shuffle_done",
    "CardSetDispensed": "hand", "HandTaken": "hand_taken", "DeviceWarning": "warning",
}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("probe", help="identify a shuffler or shoe and show its events")
    parser.add_argument("--device", choices=("shuffler", "shoe"), required=True)
    parser.add_argument("--url", required=True,
                        help="serial port, socket://HOST:PORT, or usb://VVVV:PPPP")
    parser.add_argument("--dialect", choices=("framed", "scanner", "beetek", "hid"),
                        default="framed", help="shoe dialect (default framed)")
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="how long to listen for shoe events (default 5)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.set_defaults(func=run)


def _plain(value: Any) -> Any:
    if isinstance(value, Card):
        return value.code
    if isinstance(value, Enum):
        return value.value if isinstance(value.value, str) else value.name.lower()
    if isinstance(value, (tuple, list, frozenset, set)):
        items = [_plain(v) for v in value]
        return sorted(items) if isinstance(value, (frozenset, set)) else items
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


def event_json(event: DeviceEvent) -> dict[str, Any]:
    """``{"event": "card", "card": "TD", ...}``: a typed event as one flat JSON object."""
    body = _plain(event)
    name = _EVENT_NAMES.get(type(event).__name__, type(event).__name__.lower())
    return {"event": name, **body}


def _describe(event: DeviceEvent) -> str:
    body = {k: v for k, v in _plain(event).items() if k not in ("device", "at")}
    fields = " ".join(f"{k}={v}" for k, v in body.items() if v not in (None, "", [], False))
    return f"{_EVENT_NAMES.get(type(event).__name__, type(event).__name__)} {fields}".rstrip()


class _Printer:
    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    def record(self, name: str, value: Any, text: str) -> None:
        if self.as_json:
            data = _plain(value)
            print_json({"event": name, **(data if isinstance(data, dict) else {"value": data})})
        else:
            print(text, flush=True)

    def event(self, event: DeviceEvent) -> None:
        if self.as_json:
            print_json(event_json(event))
        else:
            print(_describe(event), flush=True)


def _open(args: argparse.Namespace, events: queue.Queue[DeviceEvent]) -> Any:
    if args.device == "shuffler":
        from drivers.shuffler import Shuffler

        return Shuffler(_target(args.url), events, backoff=(0.1, 0.5))
    from drivers.shoe import open_shoe

    if args.dialect == "framed":
        return open_shoe("framed", _target(args.url), events, backoff=(0.1, 0.5))
    return open_shoe(args.dialect, args.url, events)


def _target(url: str) -> Any:
    if url.startswith("usb://"):
        from drivers.usb_bulk import UsbBulkTransport

        return UsbBulkTransport.from_url(url)
    return url


def run(args: argparse.Namespace) -> int:
    events: queue.Queue[DeviceEvent] = queue.Queue()
    out = _Printer(args.json)
    driver = _open(args, events)
    driver.start()
    try:
        connected = getattr(driver, "connected", None)
        if connected is not None and not connected.wait(CONNECT_SECONDS):
            reason = getattr(driver, "last_error", "") or "no answer"
            raise OpenFailed(f"{args.device} at {args.url} did not connect: {reason}")
        if args.device == "shuffler" or args.dialect == "framed":
            identity = driver.identify()
            out.record("identity", identity,
                       f"{identity.vendor} {identity.model} serial {identity.serial} firmware "
                       f"{identity.firmware_version} ({identity.firmware_hash}) protocol "
                       f"{identity.protocol_version}")
            status = driver.status()
            faults = ", ".join(sorted(f.value for f in status.faults)) or "none"
            out.record("status", status,
                       f"status {status.state.name.lower()} faults {faults} boot "
                       f"{status.boot_id:08x} hand {status.hand_number} "
                       f"cards remaining {status.cards_remaining}")
        if args.device == "shoe":
            deadline = time.monotonic() + args.seconds
            while (left := deadline - time.monotonic()) > 0:
                try:
                    event = events.get(timeout=left)
                except queue.Empty:
                    break
                if type(event).__name__ not in ("DeviceOnline",):
                    out.event(event)
    finally:
        driver.close()
    return 0
