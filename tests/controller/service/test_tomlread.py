"""The one TOML reader (issue 35, "one rule, one place"): every config file of the project is
read by :mod:`controller.service.tomlread`, key by declared key, and every problem names the
file, the dotted key and what is wrong, in the reading package's own error class."""

from __future__ import annotations

import ast
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

from controller.errors import TablectlError
from controller.feed.config import load_feed_config
from controller.service.config import load_config, parse_config
from controller.service.errors import ConfigError
from controller.service.tomlread import (
    FieldSpec,
    FieldType,
    Section,
    choice,
    load_document,
    parse_document,
)
from controller.studio.config import load_studio_config
from controller.studio.errors import StudioConfigError
from controller.web.config import load_web_config
from controller.web.errors import WebConfigError

PROJECT_ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = PROJECT_ROOT / "systemd" / "tablectl.example.toml"


class Colour(str, Enum):
    RED = "red"
    GREEN = "green"


FIELDS = (
    FieldSpec("name", FieldType.TEXT),
    FieldSpec("count", FieldType.INTEGER, 3, minimum=1, maximum=9),
    FieldSpec("on", FieldType.BOOLEAN, False),
    FieldSpec("tags", FieldType.TEXTS, ()),
    FieldSpec("amounts", FieldType.INTEGERS, (), minimum=1, maximum=100),
    FieldSpec("file", FieldType.PATH, None, empty_ok=True),
    FieldSpec("colour", FieldType.TEXT, Colour.RED, check=choice(Colour, "colour")),
)


def section_of(text: str, base: Path | None = None) -> Section:
    root = parse_document(text, "test.toml", base=base)
    found = root.section("s", required=True)
    assert found is not None
    return found


def test_a_declared_section_reads_typed_values_and_defaults(tmp_path: Path) -> None:
    """Each kind comes back as its Python value; a key not given is its default; a path is
    relative to the file's directory and ``~`` is the home directory."""
    values = section_of('[s]\nname = "t1"\ntags = ["a", "b"]\namounts = [5, 1]\n'
                        'file = "keys/k"\ncolour = "green"\n', tmp_path).read(FIELDS)
    assert values == {"name": "t1", "count": 3, "on": False, "tags": ("a", "b"),
                      "amounts": (5, 1), "file": tmp_path / "keys" / "k",
                      "colour": Colour.GREEN}
    home = section_of('[s]\nname = "x"\nfile = "~/k"\n').read(FIELDS)["file"]
    assert home == Path.home() / "k"
    assert section_of('[s]\nname = "x"\nfile = ""\n').read(FIELDS)["file"] is None


@pytest.mark.parametrize(("body", "message"), [
    ("", "test.toml: s.name: missing (required)"),
    ('name = 5', "test.toml: s.name: must be a string, got 5 (an integer)"),
    ('name = ""', "test.toml: s.name: must not be empty"),
    ('name = "x"\ncount = 10', "test.toml: s.count: must be at most 9, got 10"),
    ('name = "x"\ncount = true', "test.toml: s.count: must be an integer, got true"),
    ('name = "x"\non = "yes"', "test.toml: s.on: must be true or false, got 'yes' (a string)"),
    ('name = "x"\ntags = [1]', "test.toml: s.tags: must be a list of strings, got a list"),
    ('name = "x"\namounts = [0]', "test.toml: s.amounts: each must be at least 1, got 0"),
    ('name = "x"\nfile = "a\\u0000b"', "test.toml: s.file: must not contain a NUL character"),
    ('name = "x"\ncolour = "blue"', "test.toml: s.colour: unknown colour 'blue'; use one of "
                                    "red, green"),
    ('name = "x"\ncuont = 4', "test.toml: s.cuont: unknown key (did you mean 'count'?)"),
])
def test_every_problem_names_the_file_the_key_and_the_problem(body: str, message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        section_of(f"[s]\n{body}\n").read(FIELDS)
    assert str(refused.value) == message


def test_a_check_names_the_key_or_speaks_for_itself() -> None:
    """A check's ValueError is the problem, named with the key; a project error it raises is
    already in its own words and is raised as it is."""
    class Own(TablectlError):
        pass

    def refuse(value: str) -> str:
        raise ValueError(f"{value!r} is not a colour") if value == "blue" else Own("own words")

    fields = (FieldSpec("c", FieldType.TEXT, check=refuse),)
    with pytest.raises(ConfigError, match=r"^test.toml: s.c: 'blue' is not a colour$"):
        section_of('[s]\nc = "blue"\n').read(fields)
    with pytest.raises(Own, match="^own words$"):
        section_of('[s]\nc = "pink"\n').read(fields)


def test_the_caller_chooses_its_error_class(tmp_path: Path) -> None:
    """Each package keeps its own exception tree: the reader raises what the caller makes."""
    class Mine(Exception):
        pass

    def mine(source: str, key: str | None, problem: str) -> Mine:
        return Mine(f"{source}|{key}|{problem}")

    path = tmp_path / "x.toml"
    path.write_text("[s]\nn = 1\n")
    with pytest.raises(Mine, match=r"x.toml\|s.n\|must be a string"):
        section = load_document(path, error=mine).section("s")
        assert section is not None
        section.read((FieldSpec("n", FieldType.TEXT),))
    with pytest.raises(Mine, match=r"nothing.toml\|None\|cannot read: No such file"):
        load_document(tmp_path / "nothing.toml", error=mine)
    path.write_text("[s\n")
    with pytest.raises(Mine, match=r"\|None\|not valid TOML"):
        load_document(path, error=mine)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _service(tmp_path: Path) -> Path:
    text = EXAMPLE.read_text(encoding="utf-8") + "\n[feed]\nsite = \"s1\"\n"
    return _write(tmp_path, "tablectl.toml",
                  text.replace("[journal]", "[journal]\ndiretcory = 1", 1))


def _feed(tmp_path: Path) -> Path:
    return _write(tmp_path, "tablectl.toml", '[table]\nid = "T1"\n[journal]\ndirectory = "j"\n'
                  '[feed]\nsite = "s1"\nbroker = "mqtt://127.0.0.1"\nsigning_key = "k"\n'
                  'windw = 4\n')


def _web(tmp_path: Path) -> Path:
    return _write(tmp_path, "web.toml", "[web]\nprot = 8640\n")


def _studio(tmp_path: Path) -> Path:
    return _write(tmp_path, "studio.toml", '[studio]\nport = 8443\ncertificate = "s.pem"\n'
                  'private_key = "s.key"\nclient_ca = "ca.pem"\nclients = ["gs1"]\nlisen = 1\n')


@pytest.mark.parametrize(("write", "load", "error", "named"), [
    (_service, load_config, ConfigError, "journal.diretcory: unknown key (did you mean "
                                         "'directory'?)"),
    (_feed, load_feed_config, ConfigError, "feed.windw: unknown key (did you mean 'window'?)"),
    (_web, load_web_config, WebConfigError, "web.prot: unknown key (did you mean 'port'?)"),
    (_studio, load_studio_config, StudioConfigError,
     "studio.lisen: unknown key (did you mean 'listen'?)"),
])
def test_every_config_refuses_a_typo_by_file_and_key(
        tmp_path: Path, write: Callable[[Path], Path], load: Callable[[Path], Any],
        error: type[Exception], named: str) -> None:
    """The service's, the feed's, the web's and the studio's config: one reader, one refusal."""
    path = write(tmp_path)
    with pytest.raises(error) as refused:
        load(path)
    assert str(path.name) in str(refused.value) and named in str(refused.value)


def test_the_service_leaves_the_feed_section_to_the_feed(tmp_path: Path) -> None:
    """``[feed]`` is the feed's (its own reader checks it); the service only asks that it be a
    table."""
    text = EXAMPLE.read_text(encoding="utf-8")
    assert parse_config(text + '\n[feed]\nanything = "the feed checks it"\n',
                        source="t.toml", base=tmp_path).table_id
    with pytest.raises(ConfigError, match=r"t.toml: feed: must be a table \(\[feed\], read by "
                                          r"tablectl feed"):
        parse_config("feed = 1\n" + text, source="t.toml", base=tmp_path)


def test_no_module_but_the_reader_parses_toml() -> None:
    """One TOML reader: no other module of the project imports ``tomllib``."""
    readers = []
    for package in ("controller", "drivers", "firmware_sim"):
        for path in (PROJECT_ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                if any(name.split(".")[0] in ("tomllib", "tomli") for name in names):
                    readers.append(str(path.relative_to(PROJECT_ROOT)))
    assert readers == ["controller/service/tomlread.py"]
