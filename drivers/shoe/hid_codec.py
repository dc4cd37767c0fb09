"""Decoder for USB HID boot-keyboard reports from a barcode scanner in keyboard mode.

A boot-keyboard input report is 8 bytes: a modifier bitmap (0x02 left Shift, 0x20 right Shift),
a reserved byte, then up to six usage ids of the keys currently down (HID Usage Tables, page 7).
A key produces a character when it appears in a report and was not down in the previous one, so
a key held across reports (rollover, repeated reports) counts once. Enter (0x28, keypad 0x58)
ends a code. ``ErrorRollOver`` reports (all six slots 0x01) are phantom states and ignored.
Pure and incremental like the other decoders; ``decode(buf)`` consumes one report at a time.
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


class HidKeyboardCodec:
    """Turns boot-keyboard reports into codes; keeps the keys-down state between reports."""

    def __init__(self, *, aim: bool = True) -> None:
        self.aim = aim
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
