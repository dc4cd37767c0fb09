"""The link from a table's tile to its rounds in that table's surveillance console.

Each table runs its own ``tablectl web`` (the console reads that table's journal), so the floor
cannot know where it is: the house gives a URL template (``--console-url``) with two
placeholders, each filled URL-encoded: ``{table}`` (the table id its records carry) and
``{site}`` (the feed's site), e.g. ``https://{table}.pit.example:8640/console`` when each
table's console has its own name, or ``https://console.{site}.example/{table}/console``
behind a proxy. Checked at start, so a typo is a one-line error, not a broken link.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from controller.floor.page.errors import FloorPageConfigError
from controller.web.video import link_template_problem

PLACEHOLDERS = ("table", "site")


@dataclass(frozen=True, slots=True)
class ConsoleLink:
    template: str

    @classmethod
    def parse(cls, template: str) -> ConsoleLink:
        """The template, or :class:`FloorPageConfigError` naming what is wrong with it."""
        problem = link_template_problem("--console-url", template, PLACEHOLDERS)
        if problem is not None:
            raise FloorPageConfigError(problem)
        return cls(template)

    def url(self, table: str, site: str) -> str:
        return self.template.format_map({"table": quote(table, safe=""),
                                         "site": quote(site, safe="")})
