"""The link from a table's tile to its rounds in that table's surveillance console.

Each table runs its own ``tablectl web`` (the console reads that table's journal), so the floor
cannot know where it is: the house gives a URL template (``--console-url``) with two
placeholders, each filled URL-encoded: ``{table}`` (the table id its records carry) and
``{site}`` (the feed's site), e.g. ``https://{table}.pit.example:8640/console`` when each
table's console has its own name, or ``https://console.{site}.example/{table}/console``
behind a proxy. Checked at start, so a typo is a one-line error, not a broken link.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from controller.floor.page.errors import FloorPageConfigError

PLACEHOLDERS = ("table", "site")


@dataclass(frozen=True, slots=True)
class ConsoleLink:
    template: str

    @classmethod
    def parse(cls, template: str) -> ConsoleLink:
        """The template, or :class:`FloorPageConfigError` naming what is wrong with it."""
        try:
            fields = [name for _text, name, _spec, _conversion
                      in string.Formatter().parse(template) if name is not None]
        except ValueError as error:
            raise FloorPageConfigError(f"--console-url: {error} (placeholders are {{table}}, "
                                       "{site})") from error
        for name in fields:
            if name not in PLACEHOLDERS:
                raise FloorPageConfigError(f"--console-url: unknown placeholder {{{name}}} "
                                           "(placeholders are {table}, {site})")
        parts = urlsplit(template)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise FloorPageConfigError(f"--console-url {template!r}: not an http(s) URL")
        return cls(template)

    def url(self, table: str, site: str) -> str:
        return self.template.format_map({"table": quote(table, safe=""),
                                         "site": quote(site, safe="")})
