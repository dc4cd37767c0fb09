"""docs/rules-coverage.md cannot drift from the code: every test it names exists, and every clause
the pay tables cite is covered by a row."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from controller.games.catalog import GAMES

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "rules-coverage.md").read_text(encoding="utf-8")
ALIASES = dict(re.findall(r"`([A-Z0-9]+)` =\s*`(tests/[^`]+\.py)`", DOC))


def _references() -> list[tuple[str, str]]:
    refs = []
    for file, func in re.findall(r"`([A-Za-z0-9_/.]+)::(test_[a-z0-9_]+)`", DOC):
        refs.append((ALIASES.get(file, file), func))
    return refs


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}


def test_aliases_are_defined() -> None:
    """The abbreviations used in the tables are all defined at the top of the document."""
    assert {"S3P", "SL", "S3CP", "LIM", "GP", "GPK", "GC", "ODDS",
            "TI", "TB", "TR", "TP", "TC", "TE", "ES", "EH", "EN", "EL"} <= set(ALIASES)


@pytest.mark.parametrize(("file", "func"), sorted(set(_references())))
def test_referenced_test_exists(file: str, func: str) -> None:
    """A test named by the coverage document exists in the file it names."""
    path = ROOT / file
    assert path.is_file(), f"{file} does not exist"
    assert func in _test_functions(path), f"{file} has no {func}"


def _cited_clauses() -> set[tuple[str, str]]:
    cited = set()
    for rules in GAMES.values():
        texts = [spec.clause for spec in rules.bets.values()]
        texts += [line.clause for spec in rules.bets.values() for line in spec.paytable]
        for text in texts:
            for cite, numbers in re.findall(r"([A-Z0-9-]+) ([0-9][0-9.,\- ]*)", text):
                for number in re.split(r"[, ]+", numbers.strip(" ,")):
                    if number and cite == rules.cite:
                        cited.add((cite, number.split("-")[0]))
    return cited


def test_every_cited_clause_has_a_row() -> None:
    """Each clause number the pay tables cite appears in its rule set's section."""
    sections = dict(re.findall(r"^## ([A-Z0-9-]+):[^\n]*\n(.*?)(?=^## |\Z)", DOC, re.M | re.S))
    missing = [f"{cite} {number}" for cite, number in sorted(_cited_clauses())
               if number not in sections.get(cite, "")]
    assert not missing, f"clauses cited in the catalog but not in the coverage doc: {missing}"
