"""A link from a round to the surveillance video at its time.

Video management systems open a camera's recording at a moment from a URL (``...play?camera=
T1&t=2026-11-23T18%3A00%3A05Z``), so the console needs no VMS client: the house configures a
URL template (``web.video_url``) with three placeholders, each filled URL-encoded:

* ``{table}``: the table id the journal records carry;
* ``{utc}``: the round's first record's time, ISO 8601 UTC to the second (``2026-11-23T18:00:05Z``);
* ``{epoch}``: the same moment in whole Unix seconds.

Without a template there is no link. The template is checked when the config is read (known
placeholders only, ``http``/``https``), so a typo is a one-line error at start, not a broken
link found during an incident.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from datetime import timezone
from urllib.parse import quote, urlsplit

from controller.web.errors import WebConfigError
from controller.web.localtime import parse_utc

PLACEHOLDERS = ("table", "utc", "epoch")


def link_template_problem(name: str, template: str, placeholders: tuple[str, ...]
                          ) -> str | None:
    """What is wrong with a link template the house configures (``name``: the key or option
    that gave it), or None: known ``placeholders`` only, and an http(s) URL with a host. The one
    check of this video link and of the floor page's console link
    (:mod:`controller.floor.page.console`), so a typo in either is a one-line error at start."""
    known = ", ".join(f"{{{placeholder}}}" for placeholder in placeholders)
    try:
        fields = [field for _text, field, _spec, _conversion
                  in string.Formatter().parse(template) if field is not None]
    except ValueError as error:  # an unmatched brace, said by the formatter
        return f"{name}: {error} (placeholders are {known})"
    for field in fields:
        if field not in placeholders:
            return f"{name}: unknown placeholder {{{field}}} (placeholders are {known})"
    parts = urlsplit(template)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"{name} {template!r}: not an http(s) URL"
    return None


@dataclass(frozen=True, slots=True)
class VideoLink:
    """The configured template; :meth:`url` fills it for one round."""

    template: str

    @classmethod
    def parse(cls, template: str) -> VideoLink:
        """The template, or :class:`WebConfigError` naming what is wrong with it."""
        problem = link_template_problem("web.video_url", template, PLACEHOLDERS)
        if problem is not None:
            raise WebConfigError(problem)
        return cls(template)

    def url(self, table: str | None, utc_text: str | None) -> str | None:
        """The link for a round of ``table`` that began at ``utc_text``; None without either."""
        moment = parse_utc(utc_text)
        if not table or moment is None:
            return None
        moment = moment.astimezone(timezone.utc).replace(microsecond=0)
        values = {"table": table,
                  "utc": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
                  "epoch": str(int(moment.timestamp()))}
        return self.template.format_map({k: quote(v, safe="") for k, v in values.items()})
