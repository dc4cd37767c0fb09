"""Strict reading of one parsed TOML document, key by key.

``tomllib`` gives plain dicts; a typo such as ``[limits.tei]`` or ``duribility = "always"`` would
then be silently ignored and the table would run on a default nobody chose. :class:`Section`
hands out values by key with a type check and remembers what was read, so that
:meth:`Section.finish` can refuse every key that was not (with a "did you mean" when one is
close). Every error is a :class:`ConfigError` naming the file, the dotted key and the problem.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from controller.service.errors import ConfigError

_MISSING: Final = object()

_TOML_TYPE = {str: "a string", int: "an integer", bool: "true or false", list: "a list",
              dict: "a table", float: "a number"}


def _describe(value: object) -> str:
    kind = _TOML_TYPE.get(type(value), type(value).__name__)
    return f"{kind} ({value!r})" if not isinstance(value, (dict, list)) else kind


class Section:
    """One TOML table under the dotted ``prefix`` of the file ``source``."""

    def __init__(self, source: str, prefix: str, data: dict[str, Any]) -> None:
        self.source = source
        self.prefix = prefix
        self._data = data
        self._used: set[str] = set()

    def key(self, name: str) -> str:
        """The dotted path of ``name`` in this section, as errors print it."""
        return f"{self.prefix}.{name}" if self.prefix else name

    def error(self, name: str | None, problem: str) -> ConfigError:
        return ConfigError(self.source, self.key(name) if name else (self.prefix or None), problem)

    def __contains__(self, name: str) -> bool:
        return name in self._data

    def names(self) -> Iterator[str]:
        """Every key of the section; the caller reads each, so none is reported unknown."""
        return iter(list(self._data))

    def _take(self, name: str, default: object) -> object:
        self._used.add(name)
        if name in self._data:
            return self._data[name]
        if default is _MISSING:
            unread = [key for key in self._data if key not in self._used]
            import difflib  # only for a typo: the feed keeps its memory small

            typo = difflib.get_close_matches(name, unread, n=1, cutoff=0.7)
            if typo:  # "gmae" is the better report than "game: missing"
                raise self.error(typo[0], f"unknown key (did you mean {name!r}?)")
            raise self.error(name, "missing (required)")
        return default

    def string(self, name: str, default: object = _MISSING, *, empty_ok: bool = False) -> Any:
        value = self._take(name, default)
        if value is default and name not in self._data:
            return value
        if not isinstance(value, str):
            raise self.error(name, f"must be a string, got {_describe(value)}")
        if not value and not empty_ok:
            raise self.error(name, "must not be empty")
        return value

    def integer(self, name: str, default: object = _MISSING, *, minimum: int | None = None,
                maximum: int | None = None, unit: str = "") -> Any:
        value = self._take(name, default)
        if value is default and name not in self._data:
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            hint = " (money is integer minor units, e.g. 500 for 5.00)" if unit == "minor" else ""
            raise self.error(name, f"must be an integer{hint}, got {_describe(value)}")
        if minimum is not None and value < minimum:
            raise self.error(name, f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise self.error(name, f"must be at most {maximum}, got {value}")
        return value

    def boolean(self, name: str, default: object = _MISSING) -> Any:
        value = self._take(name, default)
        if value is default and name not in self._data:
            return value
        if not isinstance(value, bool):
            raise self.error(name, f"must be true or false, got {_describe(value)}")
        return value

    def strings(self, name: str, default: object = _MISSING) -> Any:
        value = self._take(name, default)
        if value is default and name not in self._data:
            return value
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(name, f"must be a list of strings, got {_describe(value)}")
        return tuple(value)

    def section(self, name: str, *, required: bool = False) -> Section | None:
        """The sub-table ``name`` (``None`` when absent and not required)."""
        value = self._take(name, _MISSING if required else None)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.error(name, f"must be a table ([{self.key(name)}]), got {_describe(value)}")
        return Section(self.source, self.key(name), value)

    def finish(self) -> None:
        """Refuse every key nobody read: a typo must not be silently ignored."""
        unknown = [name for name in self._data if name not in self._used]
        if not unknown:
            return
        name = unknown[0]
        import difflib

        close = difflib.get_close_matches(name, sorted(self._used), n=1)
        hint = f"did you mean {close[0]!r}?" if close else \
            f"known keys here: {', '.join(sorted(self._used)) or 'none'}"
        raise self.error(name, f"unknown key ({hint})")
