"""Decoder for plain serial barcode scanners: one code per line.

Field scanners end a code with CR, LF or CRLF (configurable on the scanner, so we accept all
three), may wrap it in a configured prefix/suffix (often STX/ETX) and may put an AIM symbology
identifier (``]C1`` = Code 128) in front. The decoder is pure and incremental: ``decode(buf)``
returns ``(consumed, message)``; ``(0, None)`` means "need more bytes". A CR is a terminator by
itself, so a CRLF split across two reads yields the code on CR and an empty line that is skipped
silently. Anything that is not a clean code is returned as :class:`Garbage`, never raised.

An over-long line is dropped *up to and including its terminator*, however it arrives. The
decoder cannot hold the whole of it (a scanner gone mad must not grow our buffer), so once a line
passes ``max_length`` without a terminator it remembers that it is inside a line it is
discarding: the tail that arrives later is discarded with it and never read as the start of a new
line. A tail such as ``...100110\r`` therefore cannot become a card that was never sent. The
drop is reported once, when the terminator ends it (or every ``MAX_DISCARD`` bytes of a stream
that never ends a line). This one flag is the decoder's only state; ``reset()`` clears it.
"""

from __future__ import annotations

from drivers.shoe.codes import Garbage, ScannedCode, printable, scanned

CR, LF = 0x0D, 0x0A
DEFAULT_MAX_LENGTH = 80
MAX_DISCARD = 4096
"""A stream that never ends a line is reported once per this many bytes, not once per read."""
NO_READ_TEXT = "NR"  # the "no read" message scanners send when configured to report misses

Message = ScannedCode | Garbage


class ScannerCodec:
    """Incremental line decoder with optional prefix/suffix and AIM identifier."""

    def __init__(self, *, prefix: bytes = b"", suffix: bytes = b"", aim: bool = True,
                 max_length: int = DEFAULT_MAX_LENGTH) -> None:
        self.prefix = bytes(prefix)
        self.suffix = bytes(suffix)
        self.aim = aim
        self.max_length = max_length + len(self.prefix) + len(self.suffix)
        self._in_long_line = False
        """Inside an over-long line whose terminator has not arrived: drop until it does."""
        self._dropped = 0

    def reset(self) -> None:
        """Forget a line being discarded (after a reconnect the next byte starts a new line)."""
        self._in_long_line, self._dropped = False, 0

    def decode(self, buf: bytes) -> tuple[int, Message | None]:
        """Consume at most one line (or one run of noise) from the front of ``buf``."""
        end = _terminator(buf)
        if self._in_long_line:
            return self._discard(buf, end)
        if end < 0:
            if len(buf) > self.max_length:
                return self._discard(buf, end)
            return 0, None
        consumed = end + 1
        if buf[end] == CR and end + 1 < len(buf) and buf[end + 1] == LF:
            consumed += 1
        line = bytes(buf[:end])
        if not line:
            return consumed, None  # the LF of a split CRLF, or a blank line
        return consumed, self._parse(line)

    def _discard(self, buf: bytes, end: int) -> tuple[int, Message | None]:
        """Drop ``buf`` up to and including the terminator at ``end`` (all of it if none)."""
        consumed = len(buf) if end < 0 else end + 1
        self._dropped += consumed
        self._in_long_line = end < 0
        if self._in_long_line and self._dropped < MAX_DISCARD:
            return consumed, None  # the rest of the line is still to come: keep dropping it
        dropped, self._dropped = self._dropped, 0
        why = (f"line longer than {self.max_length} bytes dropped up to its CR/LF" if end >= 0
               else f"no CR/LF in {dropped} bytes; dropping until the next one")
        return consumed, Garbage(why, dropped, bytes(buf[:min(consumed, 64)]))

    def _parse(self, line: bytes) -> Message:
        if len(line) > self.max_length:
            return Garbage(f"line longer than {self.max_length} bytes dropped", len(line), line)
        if self.prefix:
            if not line.startswith(self.prefix):
                return Garbage("line without the configured prefix", len(line), line)
            line_body = line[len(self.prefix):]
        else:
            line_body = line
        if self.suffix:
            if not line_body.endswith(self.suffix):
                return Garbage("line without the configured suffix", len(line), line)
            line_body = line_body[: len(line_body) - len(self.suffix)]
        try:
            text = line_body.decode("ascii")
        except UnicodeDecodeError:
            return Garbage("non-ASCII bytes in a code", len(line), line)
        code = scanned(text, aim=self.aim) if printable(text.strip()) else None
        if code is None:
            return Garbage("blank or non-printable code", len(line), line)
        return code

    def encode(self, code: ScannedCode, ending: bytes = b"\r\n") -> bytes:
        """The bytes a scanner configured like this codec sends for ``code`` (simulators)."""
        aim = (code.symbology or "") if self.aim else ""
        return self.prefix + (aim + code.text).encode("ascii") + self.suffix + ending


def _terminator(buf: bytes) -> int:
    cr, lf = buf.find(b"\r"), buf.find(b"\n")
    if cr < 0:
        return lf
    return cr if lf < 0 else min(cr, lf)
