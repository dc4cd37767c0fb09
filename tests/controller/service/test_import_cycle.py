"""``service/app.py`` and ``service/wiring.py`` do not import each other (issue 27): the
lifecycle wires the table when it starts (a deferred import of ``wiring``), and ``wiring``
takes what both need (``Health``) from ``service/health.py``."""

from __future__ import annotations

import ast
from pathlib import Path

SERVICE = Path(__file__).resolve().parents[3] / "controller" / "service"


def _imports(module: str) -> set[str]:
    """Every ``controller.*`` module ``module`` imports, at any depth of its code."""
    found: set[str] = set()
    for node in ast.walk(ast.parse((SERVICE / f"{module}.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {name for name in found if name.startswith("controller.")}


def test_wiring_does_not_import_the_lifecycle() -> None:
    assert "controller.service.app" not in _imports("wiring")
    assert "controller.service.health" in _imports("wiring")


def test_health_is_the_lifecycles_and_the_same_class() -> None:
    from controller.service import app, health

    assert app.Health is health.Health
