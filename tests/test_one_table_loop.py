"""One table loop, the one production runs (issue 35).

Only the service's table thread (``controller/service/wiring/tablethread.py``, ``TableThread``)
starts a thread for a table and loops over a queue of table inputs. The table
(``controller.table.table.Table``) and the journal (``controller.journal.recorder.JournaledTable``)
have no thread, queue or loop of their own: each handles one input on the caller's thread (the
table thread; replay and recovery synchronously). So the crash campaign, the delivery tests, the
end-to-end rig and the bench, which all wire ``TableThread``, test the loop production runs.
Checked against the source files, as ``tests/test_layout.py`` checks the imports.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from controller.journal.recorder import JournaledTable
from controller.table.table import Table

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("controller", "drivers", "firmware_sim")
TABLE_THREAD = "controller.service.wiring.tablethread"
LOOP_ATTRIBUTES = ("run", "start", "close", "put", "inputs", "taps", "tap", "identified")
"""What a table loop had (``Table.run/start/close/put/inputs/taps/tap``, the recorder's
``run/start/close/put/inputs/identified``): none of it may come back."""


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for package in PACKAGES:
        for path in sorted((PROJECT_ROOT / package).rglob("*.py")):
            parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            yield name, ast.parse(path.read_text(), filename=str(path))


def _called(node: ast.AST, attribute: str) -> bool:
    """``node`` calls something named ``attribute`` (``x.attribute(...)`` or ``attribute(...)``)."""
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            if (isinstance(func, ast.Attribute) and func.attr == attribute) or \
                    (isinstance(func, ast.Name) and func.id == attribute):
                return True
    return False


def _table_thread_names(tree: ast.Module) -> list[int]:
    """Lines where a ``Thread`` is built whose name starts with ``table``."""
    lines = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if (func.attr if isinstance(func, ast.Attribute)
                else func.id if isinstance(func, ast.Name) else None) != "Thread":
            continue
        for keyword in call.keywords:
            value = keyword.value
            first = value.values[0] if isinstance(value, ast.JoinedStr) and value.values \
                else value
            if keyword.arg == "name" and isinstance(first, ast.Constant) \
                    and isinstance(first.value, str) and first.value.startswith("table"):
                lines.append(call.lineno)
    return lines


def _queue_loops_feeding_a_table(name: str, tree: ast.Module) -> list[str]:
    """Classes (and modules, for their functions) that loop over a queue (a ``while`` that
    calls ``get``) and hand inputs to a table (call ``process``)."""
    scopes: list[tuple[str, list[ast.stmt]]] = [
        (name, [node for node in tree.body if not isinstance(node, ast.ClassDef)])]
    scopes += [(f"{name}.{node.name}", node.body) for node in ast.walk(tree)
               if isinstance(node, ast.ClassDef)]
    found = []
    for scope, body in scopes:
        loops = any(isinstance(node, ast.While) and _called(node, "get")
                    for statement in body for node in ast.walk(statement))
        feeds = any(_called(statement, "process") for statement in body)
        if loops and feeds:
            found.append(scope)
    return found


def test_only_the_service_starts_a_table_thread() -> None:
    """Issue 35: one module builds the ``table-<id>`` thread, once: the service's table
    thread. No other module starts a thread for a table."""
    starting = {name: lines for name, tree in _modules()
                if (lines := _table_thread_names(tree))}
    assert list(starting) == [TABLE_THREAD], starting
    assert len(starting[TABLE_THREAD]) == 1, starting


def test_only_the_service_loops_over_table_inputs() -> None:
    """Issue 35: the one loop that takes table inputs from a queue and hands them to the
    table is ``TableThread``; no ``run`` loop over a table queue anywhere else."""
    loops = [scope for name, tree in _modules()
             for scope in _queue_loops_feeding_a_table(name, tree)]
    assert loops == [f"{TABLE_THREAD}.TableThread"], loops


def test_the_table_and_the_journal_have_no_loop() -> None:
    """Issue 35: the table and the journaled table only ``process`` one input on the caller's
    thread (replay and recovery feed them synchronously); their old loops are gone."""
    for cls in (Table, JournaledTable):
        assert callable(cls.process)
        kept = [attribute for attribute in LOOP_ATTRIBUTES if hasattr(cls, attribute)]
        assert not kept, f"{cls.__name__} has {kept}"
    for module in ("controller/table/table.py", "controller/journal/recorder.py"):
        source = (PROJECT_ROOT / module).read_text()
        imported = {alias.name for node in ast.walk(ast.parse(source))
                    if isinstance(node, ast.Import) for alias in node.names}
        assert not imported & {"threading", "queue"}, (module, imported)
