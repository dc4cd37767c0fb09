"""The one TOML reader: every config file of the project (the service's ``tablectl.toml`` and
its ``[feed]`` section, ``web.toml``, ``studio.toml``, the floor's file) is read here.

``tomllib`` gives plain dicts; a typo such as ``[limits.tei]`` or ``duribility = "always"`` would
then be silently ignored and the table would run on a default nobody chose. :class:`Section`
hands out values by key with a type check (one method per TOML type, or a declared
:class:`FieldSpec`: its kind, range, default or required, and the check that turns it into the
config's value), remembers what was read, and :meth:`Section.finish` refuses every key that was
not (with a "did you mean" when one is close). :func:`load_document` and
:func:`parse_document` read the file itself. Every error names the file, the dotted key and the
problem, as the caller's own error class (:data:`ErrorFactory`: each package keeps its
exception tree; the service's is :class:`ConfigError`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Final, TypeVar

from controller.errors import TablectlError
from controller.service.errors import ConfigError

_MISSING: Final = object()
_E = TypeVar("_E", bound=Enum)
REQUIRED: Final = _MISSING
"""A :class:`FieldSpec`'s default when the key must be given."""

ErrorFactory = Callable[[str, str | None, str], Exception]
"""(file, dotted key or ``None`` for the file as a whole, problem) -> the exception to raise."""

_TOML_TYPE = {str: "a string", int: "an integer", bool: "true or false", list: "a list",
              dict: "a table", float: "a number"}


def _describe(value: object) -> str:
    """The value as a problem names it: ``'x' (a string)``, ``5 (an integer)``, ``true``, ``a
    list``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    kind = _TOML_TYPE.get(type(value), type(value).__name__)
    return f"{value!r} ({kind})" if not isinstance(value, (dict, list)) else kind


class FieldType(str, Enum):
    """The TOML type of a :class:`FieldSpec`, and what the reader makes of it."""

    TEXT = "text"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    TEXTS = "texts"
    """A list of strings (a tuple)."""
    INTEGERS = "integers"
    """A list of integers (a tuple), each within the field's range."""
    PATH = "path"
    """A string naming a file: ``~`` expanded, relative to the config file's directory; an
    empty string is ``None`` where the field allows it (``empty_ok``)."""


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One key of a section, declared: a config's keys read as a table a reviewer can check
    against its documentation line by line."""

    name: str
    kind: FieldType
    default: Any = REQUIRED
    minimum: int | None = None
    maximum: int | None = None
    empty_ok: bool = False
    unit: str = ""
    """``minor`` (money: the error says minor units), ``s``, ``ms`` ... (documentation)."""
    check: Callable[[Any], Any] | None = None
    """Turns a given value (already of ``kind``) into the config's value (an Enum member, a
    parsed address); a :class:`ValueError` it raises is the problem, named with the key. A
    project error (:class:`~controller.errors.TablectlError`) is raised as it is: it already
    names what is wrong in its own words. Not applied to the default."""


def choice(kind: type[_E], what: str) -> Callable[[str], _E]:
    """A :attr:`FieldSpec.check` for one member of the Enum ``kind``, by its value; anything else
    is refused naming the choices (``unknown policy 'x'; use one of money, always, none``)."""

    def member(text: str) -> _E:
        try:
            return kind(text)
        except ValueError:
            raise ValueError(f"unknown {what} {text!r}; use one of "
                             f"{', '.join(str(m.value) for m in kind)}") from None

    return member


def parse_document(text: str | bytes, source: str, *, error: ErrorFactory = ConfigError,
                   base: Path | None = None) -> Section:
    """The top level of TOML ``text`` read from ``source``; ``base`` resolves relative paths
    (default: the working directory)."""
    try:
        data = tomllib.loads(text.decode("utf-8") if isinstance(text, bytes) else text)
    except UnicodeDecodeError as problem:
        raise error(source, None, f"not UTF-8 text ({problem.reason})") from problem
    except tomllib.TOMLDecodeError as problem:
        raise error(source, None, f"not valid TOML: {problem}") from problem
    return Section(source, "", data, error=error, base=base)


def load_document(path: str | Path, *, error: ErrorFactory = ConfigError) -> Section:
    """The top level of the TOML file at ``path``; relative paths in it are taken from the
    file's directory, so a config and the files it names can travel together."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as problem:
        raise error(str(path), None, f"cannot read: {problem.strerror or problem}") from problem
    return parse_document(raw, str(path), error=error, base=path.resolve().parent)


class Section:
    """One TOML table under the dotted ``prefix`` of the file ``source``."""

    def __init__(self, source: str, prefix: str, data: dict[str, Any], *,
                 error: ErrorFactory = ConfigError, base: Path | None = None) -> None:
        self.source = source
        self.prefix = prefix
        self._data = data
        self._used: set[str] = set()
        self._declared: set[str] = set()
        """Keys a :meth:`read` declared, given or not: what a typo is matched against."""
        self._error = error
        self.base = base
        """Where relative paths start (the config file's directory); ``None``: the working
        directory."""

    def key(self, name: str) -> str:
        """The dotted path of ``name`` in this section, as errors print it."""
        return f"{self.prefix}.{name}" if self.prefix else name

    def error(self, name: str | None, problem: str) -> Exception:
        """The caller's error for ``problem`` with key ``name`` (``None``: this section)."""
        return self._error(self.source, self.key(name) if name else (self.prefix or None),
                           problem)

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
        return Section(self.source, self.key(name), value, error=self._error, base=self.base)

    def integers(self, name: str, default: object = _MISSING, *, minimum: int | None = None,
                 maximum: int | None = None) -> Any:
        value = self._take(name, default)
        if value is default and name not in self._data:
            return value
        if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int)
                                              for v in value):
            raise self.error(name, f"must be a list of integers, got {_describe(value)}")
        for item in value:
            if minimum is not None and item < minimum:
                raise self.error(name, f"each must be at least {minimum}, got {item}")
            if maximum is not None and item > maximum:
                raise self.error(name, f"each must be at most {maximum}, got {item}")
        return tuple(value)

    def path(self, name: str, default: object = _MISSING, *, empty_ok: bool = False) -> Any:
        """A file's path: ``~`` expanded, relative to :attr:`base`; ``""`` is ``None`` when
        ``empty_ok``."""
        value = self.string(name, default, empty_ok=empty_ok)
        if value is default and name not in self._data:
            return value
        return None if value == "" else self.resolve(name, value)

    def resolve(self, name: str, value: str) -> Path:
        """The path ``value`` of key ``name`` names: ``~`` expanded, relative to :attr:`base`."""
        if "\0" in value:
            raise self.error(name, "must not contain a NUL character")
        candidate = Path(value).expanduser()
        if candidate.is_absolute():
            return candidate
        return (self.base if self.base is not None else Path.cwd()) / candidate

    def field(self, spec: FieldSpec) -> Any:
        """The value of the declared key ``spec`` (its default when absent)."""
        name = spec.name
        if spec.kind is FieldType.TEXT:
            value = self.string(name, spec.default, empty_ok=spec.empty_ok)
        elif spec.kind is FieldType.INTEGER:
            value = self.integer(name, spec.default, minimum=spec.minimum,
                                 maximum=spec.maximum, unit=spec.unit)
        elif spec.kind is FieldType.BOOLEAN:
            value = self.boolean(name, spec.default)
        elif spec.kind is FieldType.TEXTS:
            value = self.strings(name, spec.default)
        elif spec.kind is FieldType.INTEGERS:
            value = self.integers(name, spec.default, minimum=spec.minimum,
                                  maximum=spec.maximum)
        else:
            value = self.path(name, spec.default, empty_ok=spec.empty_ok)
        if spec.check is None or name not in self._data:
            return value
        try:
            return spec.check(value)
        except TablectlError:
            raise
        except ValueError as problem:
            raise self.error(name, str(problem)) from problem

    def read(self, fields: Iterable[FieldSpec], *, given_only: bool = False) -> dict[str, Any]:
        """Every declared key's value (``given_only``: only the keys present), then
        :meth:`finish`: a key not declared is refused."""
        fields = tuple(fields)
        self._declared.update(spec.name for spec in fields)
        values = {spec.name: self.field(spec) for spec in fields
                  if not given_only or spec.name in self._data}
        self.finish()
        return values

    def leave(self, name: str, reader: str) -> None:
        """The sub-table ``name`` is read and checked by ``reader`` (another process's loader,
        from the same file): this reader neither reads it nor refuses it as unknown."""
        if name in self._data and not isinstance(self._data[name], dict):
            raise self.error(name, f"must be a table ([{self.key(name)}], read by {reader}), "
                                   f"got {_describe(self._data[name])}")
        self._used.add(name)

    def finish(self) -> None:
        """Refuse every key nobody read: a typo must not be silently ignored."""
        unknown = [name for name in self._data if name not in self._used]
        if not unknown:
            return
        name = unknown[0]
        import difflib

        known = sorted(self._used | self._declared)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else \
            f"known keys here: {', '.join(known) or 'none'}"
        raise self.error(name, f"unknown key ({hint})")
