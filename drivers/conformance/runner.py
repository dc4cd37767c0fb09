"""Run a scenario matrix against a device and collect one result per scenario.

The scenarios run in order on one connection. A scenario that fails does not stop the matrix:
the next one starts from the state it needs, so one broken clause does not hide the others.
A device that stops answering altogether does stop it (every later row would only repeat
"no reply").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

import structlog

from drivers.conformance.session import (
    NoOperator, Nonconformance, NotRun, Operator, Scenario, Session, Unanswered,
)
from drivers.conformance.wire import Wire
from drivers.errors import DriverError
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
              progress: Callable[[Result], None] | None = None) -> list[Result]:
    """Run ``scenarios`` against the device behind ``transport`` (opened and closed here)."""
    wire = Wire(transport)
    session = Session(wire, operator or NoOperator())
    results: list[Result] = []
    wire.open()
    try:
        unanswered = 0
        for index, scenario in enumerate(scenarios):
            result, silent = _run_one(scenario, session)
            unanswered = unanswered + 1 if silent else 0
            results.append(result)
            if progress is not None:
                progress(result)
            if unanswered >= STOP_AFTER_UNANSWERED:
                heard = "sent nothing" if not wire.received else "stopped answering"
                results.extend(Result(s.key, s.title, s.clause, Verdict.NOT_RUN,
                                      f"not run: the device {heard} (is it on this URL?)")
                               for s in scenarios[index + 1:])
                break
    finally:
        wire.close()
    return results


def _run_one(scenario: Scenario, session: Session) -> tuple[Result, bool]:
    """The scenario's result, and whether it failed for want of any reply."""
    def result(verdict: Verdict, detail: str) -> Result:
        return Result(scenario.key, scenario.title, scenario.clause, verdict, detail)

    try:
        note = scenario.run(session)
    except Nonconformance as failure:
        log.info("conformance_fail", scenario=scenario.key, reason=str(failure))
        return result(Verdict.FAIL, str(failure)), isinstance(failure, Unanswered)
    except NotRun as reason:
        return result(Verdict.NOT_RUN, str(reason)), False
    except DriverError as error:
        return result(Verdict.FAIL, f"link: {error}"), True
    finally:
        session.wire.auto_ack = True
    return result(Verdict.PASS, note), False
