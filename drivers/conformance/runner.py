"""Run a scenario matrix against a device and collect one result per scenario.

The scenarios run in order on one connection. A scenario that fails does not stop the matrix:
the next one starts from the state it needs, so one broken clause does not hide the others.
A device that stops answering altogether does stop it (every later row would only repeat
"no reply").
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import structlog

from drivers.conformance.session import (
    PERSON_SECONDS, Bench, NoOperator, Nonconformance, NotRun, Operator, Scenario, Session,
    Unanswered,
)
from drivers.conformance.wire import Wire
from drivers.errors import DriverError
from drivers.events import DeviceEvent
from drivers.transport import Transport

log = structlog.get_logger(__name__)
STOP_AFTER_UNANSWERED = 2


class Verdict(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    NOT_RUN = "not run"


@dataclass(frozen=True, slots=True)
class Result:
    """One row of the table: the scenario, its verdict, and the note or the reason."""

    key: str
    title: str
    clause: str
    verdict: Verdict
    detail: str


def run_suite(scenarios: Sequence[Scenario], transport: Transport, *,
              operator: Operator | None = None,
              progress: Callable[[Result], None] | None = None,
              person_seconds: float = PERSON_SECONDS) -> list[Result]:
    """Run framed-link ``scenarios`` against the device behind ``transport`` (opened and
    closed here). ``person_seconds`` bounds a physical step (shorter for a simulator)."""
    wire = Wire(transport)
    wire.open()
    try:
        session = Session(wire, operator or NoOperator(), person_seconds=person_seconds)
        return run_matrix(scenarios, session, progress,
                          heard=lambda: bool(wire.received))
    finally:
        wire.close()


def run_reader_suite(scenarios: Sequence[Scenario], driver: Any,
                     events: queue.Queue[DeviceEvent], *, operator: Operator | None = None,
                     progress: Callable[[Result], None] | None = None) -> list[Result]:
    """Run reader ``scenarios`` on a shoe ``driver`` (started and closed here)."""
    from drivers.conformance.reader import ReaderSession

    session = ReaderSession(driver, events, operator or NoOperator())
    driver.start()
    try:
        return run_matrix(scenarios, session, progress, heard=lambda: session.heard)
    finally:
        driver.close()


def run_matrix(scenarios: Sequence[Scenario], session: Bench,
               progress: Callable[[Result], None] | None = None,
               heard: Callable[[], bool] = lambda: True) -> list[Result]:
    """Run ``scenarios`` in order on ``session``; ``heard`` says whether the device has sent
    anything at all (for the reason given when the run stops early)."""
    results: list[Result] = []
    unanswered = 0
    for index, scenario in enumerate(scenarios):
        result, silent = _run_one(scenario, session)
        unanswered = unanswered + 1 if silent else 0
        results.append(result)
        if progress is not None:
            progress(result)
        if unanswered >= STOP_AFTER_UNANSWERED:
            why = "stopped answering" if heard() else "sent nothing"
            results.extend(Result(s.key, s.title, s.clause, Verdict.NOT_RUN,
                                  f"not run: the device {why} (is it on this URL?)")
                           for s in scenarios[index + 1:])
            break
    return results


def _run_one(scenario: Scenario, session: Bench) -> tuple[Result, bool]:
    """The scenario's result, and whether it failed for want of any reply."""
    def result(verdict: Verdict, detail: str) -> Result:
        return Result(scenario.key, scenario.title, scenario.clause, verdict, detail)

    unknown = ""
    try:
        unknown = session.prepare()
        note = scenario.run(session)
        breach = session.breach()
        if breach is not None:
            raise breach
    except Nonconformance as found:
        failure = session.blame(found)
        log.info("conformance_fail", scenario=scenario.key, reason=str(failure))
        return (result(Verdict.FAIL, _noted(str(failure), unknown)),
                isinstance(failure, Unanswered))
    except NotRun as reason:
        return result(Verdict.NOT_RUN, _noted(str(reason), unknown)), False
    except DriverError as error:
        return result(Verdict.FAIL, _noted(f"link: {error}", unknown)), True
    finally:
        session.reset()
    return result(Verdict.PASS, _noted(note, unknown)), False


def _noted(detail: str, unknown: str) -> str:
    """Say when the row could not start from a known state (its verdict may owe to that)."""
    return f"{detail} [not started from a known state: {unknown}]" if unknown else detail
