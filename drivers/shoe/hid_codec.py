"""Decoder for USB HID boot-keyboard reports from a barcode scanner in keyboard mode.

A boot-keyboard input report is 8 bytes: a modifier bitmap (0x02 left Shift, 0x20 right Shift),
a reserved byte, then up to six usage ids of the keys currently down (HID Usage Tables, page 7).
A key produces a character when it appears in a report and was not down in the previous one, so
a key held across reports (rollover, repeated reports) counts once. Enter (0x28, keypad 0x58)
ends a code. ``ErrorRollOver`` reports (all six slots 0x01) are phantom states and ignored.
Pure and incremental like the other decoders; ``decode(buf)`` consumes one report at a time.

Report IDs: a scanner whose report descriptor declares a Report ID (item ``0x85``) prefixes
every report with that ID when it is in report protocol, so its keyboard reports are 9 bytes.
The driver asks for boot protocol (no ID) at open, but not every scanner obeys; so the codec
strips a leading ID from a 9-byte report when it is the keyboard's ID, read from the report
descriptor (:func:`keyboard_report_id`) or, when the descriptor could not be read, learned from
the first 9-byte report (a keyboard report is 9 bytes only with an ID in front). A 9-byte report
with another ID (a second collection, e.g. consumer keys) is dropped as garbage.
"""

from __future__ import annotations

from drivers.shoe.codes import Garbage, ScannedCode, scanned

REPORT_SIZE = 8
SHIFT_BITS = 0x22
ENTER_KEYS = frozenset({0x28, 0x58})
ERROR_ROLLOVER = 0x01
MAX_CODE = 80

_PLAIN = {0x04 + i: chr(ord("a") + i) for i in range(26)}
_SHIFTED = {0x04 + i: chr(ord("A") + i) for i in range(26)}
for _i, (_plain, _shift) in enumerate(zip("1234567890", "!@#$%^&*()", strict=True)):
    _PLAIN[0x1E + _i] = _plain
    _SHIFTED[0x1E + _i] = _shift
for _usage, _plain, _shift in (
    (0x2C, " ", " "), (0x2D, "-", "_"), (0x2E, "=", "+"), (0x2F, "[", "{"), (0x30, "]", "}"),
    (0x31, "\\", "|"), (0x33, ";", ":"), (0x34, "'", '"'), (0x35, "`", "~"), (0x36, ",", "<"),
    (0x37, ".", ">"), (0x38, "/", "?"),
    (0x54, "/", "/"), (0x55, "*", "*"), (0x56, "-", "-"), (0x57, "+", "+"), (0x63, ".", "."),
):
    _PLAIN[_usage], _SHIFTED[_usage] = _plain, _shift
for _i, _digit in enumerate("1234567890"):
    _PLAIN[0x59 + _i] = _SHIFTED[0x59 + _i] = _digit

USAGE_BY_CHAR: dict[str, tuple[int, bool]] = {}
"""Reverse map for simulators: character -> (usage id, needs Shift). Main block keys win."""
for _usage, _ch in sorted(_SHIFTED.items(), reverse=True):
    USAGE_BY_CHAR[_ch] = (_usage, _ch != _PLAIN[_usage])
for _usage, _ch in sorted(_PLAIN.items(), reverse=True):
    USAGE_BY_CHAR[_ch] = (_usage, False)

Message = ScannedCode | Garbage

_USAGE_PAGE, _USAGE, _COLLECTION, _END_COLLECTION, _REPORT_ID = 0x04, 0x08, 0xA0, 0xC0, 0x84
_GENERIC_DESKTOP, _KEYBOARD, _LONG_ITEM = 0x01, 0x06, 0xFE


def keyboard_report_id(descriptor: bytes) -> int | None:
    """The Report ID of the keyboard collection in a HID report descriptor (HID 1.11 section
    6.2.2), or None when its reports carry no ID. Short items only matter here; long items are
    skipped by their size byte."""
    page = usage = 0
    app: tuple[int, int] | None = None
    depth, pos = 0, 0
    first_id: int | None = None
    while pos < len(descriptor):
        prefix = descriptor[pos]
        if prefix == _LONG_ITEM:
            pos += 3 + (descriptor[pos + 1] if pos + 1 < len(descriptor) else 0)
            continue
        size = (0, 1, 2, 4)[prefix & 0x03]
        if pos + 1 + size > len(descriptor):
            break  # a truncated item: what came before is all we know
        value = int.from_bytes(descriptor[pos + 1:pos + 1 + size], "little")
        tag = prefix & 0xFC
        pos += 1 + size
        if tag == _USAGE_PAGE:
            page = value
        elif tag == _USAGE:
            usage = value
        elif tag == _COLLECTION:
            if depth == 0:
                app = (page, usage)
            depth += 1
        elif tag == _END_COLLECTION:
            depth = max(0, depth - 1)
        elif tag == _REPORT_ID:
            if app == (_GENERIC_DESKTOP, _KEYBOARD):
                return value
            first_id = value if first_id is None else first_id
    return first_id


class HidKeyboardCodec:
    """Turns boot-keyboard reports into codes; keeps the keys-down state between reports."""

    def __init__(self, *, aim: bool = True, report_id: int | None = None) -> None:
        self.aim = aim
        self.report_id = report_id
        """The keyboard's Report ID when known; learned from the first 9-byte report if not."""
        self._down: frozenset[int] = frozenset()
        self._chars: list[str] = []
        self._bad: list[str] = []

    def decode(self, buf: bytes) -> tuple[int, Message | None]:
        """Consume one whole report from the front of ``buf``; ``(0, None)`` if less than one."""
        if len(buf) < REPORT_SIZE:
            return 0, None
        return REPORT_SIZE, self.report(bytes(buf[:REPORT_SIZE]))

    def report(self, report: bytes) -> Message | None:
        """Apply one report (one interrupt transfer)."""
        if len(report) == REPORT_SIZE + 1:
            if self.report_id is None:
                self.report_id = report[0]
            if report[0] != self.report_id:
                return Garbage(f"report id {report[0]}, the keyboard's is {self.report_id}",
                               len(report), bytes(report))
            report = report[1:]
        if len(report) != REPORT_SIZE:
            return Garbage(f"{len(report)}-byte report, expected {REPORT_SIZE}", len(report),
                           bytes(report))
        keys = [k for k in report[2:] if k]
        if keys and all(k == ERROR_ROLLOVER for k in keys):
            return None  # phantom state: keep the previous keys-down set
        shift = bool(report[0] & SHIFT_BITS)
        message: Message | None = None
        pressed = [k for k in dict.fromkeys(keys) if k not in self._down]
        self._down = frozenset(keys)
        for key in pressed:
            if key in ENTER_KEYS:
                message = self._finish() or message
                continue
            char = (_SHIFTED if shift else _PLAIN).get(key)
            if char is None:
                self._bad.append(f"0x{key:02x}")
            elif len(self._chars) >= MAX_CODE:
                self._bad.append("overlong")
            else:
                self._chars.append(char)
        return message

    def _finish(self) -> Message | None:
        text, bad = "".join(self._chars), self._bad
        self._chars, self._bad = [], []
        if bad:
            return Garbage(f"code {text!r} with unmapped key(s) {', '.join(sorted(set(bad)))}",
                           len(text) + len(bad))
        return scanned(text, aim=self.aim)


def reports_for(text: str) -> list[bytes]:
    """Press-and-release reports a keyboard-mode scanner sends for ``text`` + Enter."""
    out: list[bytes] = []
    for ch in text:
        usage, shift = USAGE_BY_CHAR[ch]
        out.append(bytes([0x02 if shift else 0, 0, usage, 0, 0, 0, 0, 0]))
        out.append(bytes(REPORT_SIZE))
    out.append(bytes([0, 0, 0x28, 0, 0, 0, 0, 0]))
    out.append(bytes(REPORT_SIZE))
    return out
