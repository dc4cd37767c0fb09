"""``service/lifecycle/app.py`` and ``service/wiring/pipeline.py`` do not import each other
(issue 27): the lifecycle wires the table when it starts (a deferred import of ``wiring``), and
``wiring`` takes what both need (``Health``) from ``service/wiring/health.py``."""

from __future__ import annotations

import ast
from pathlib import Path

SERVICE = Path(__file__).resolve().parents[3] / "controller" / "service"


def _imports(path: str) -> set[str]:
    """Every ``controller.*`` module the file at ``path`` (under ``controller/service``) imports,
    at any depth of its code."""
    found: set[str] = set()
    for node in ast.walk(ast.parse((SERVICE / path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {name for name in found if name.startswith("controller.")}


def test_wiring_does_not_import_the_lifecycle() -> None:
    assert "controller.service.lifecycle.app" not in _imports("wiring/pipeline.py")
    assert "controller.service.wiring.health" in _imports("wiring/pipeline.py")


def test_health_is_the_lifecycles_and_the_same_class() -> None:
    from controller.service.lifecycle import app
    from controller.service.wiring import health

    assert app.Health is health.Health
