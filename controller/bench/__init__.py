"""The bench: a simulated table end to end through the service's own wiring (``tablectl bench``).

One room, one thing: putting seeded simulated people and a seeded simulated device around the
table that ``tablectl run`` builds, and reporting what happened. Its modules:

* :mod:`controller.bench.runner` -- :class:`Bench`, the dealer's loop that plays N rounds;
* :mod:`controller.bench.rig` -- the service's :class:`~controller.service.wiring.pipeline.Wiring`
  on a simulated device, and the physical world the people touch;
* :mod:`controller.bench.actors` -- the players and the pit supervisor;
* :mod:`controller.bench.round` -- the actors' view of the round, from table events only;
* :mod:`controller.bench.faults` -- ``--faults`` parsed, and the injector;
* :mod:`controller.bench.report` -- the report and its summary against the house edge.

The bench sits above the service (it uses the service's wiring, never a wiring of its own), beside
the CLI that runs it; nothing below the service imports it (``tests/test_layout.py``).
"""

from __future__ import annotations

from controller.bench.faults import applicable_faults, parse_faults
from controller.bench.report import BenchReport, summary_lines
from controller.bench.runner import Bench

__all__ = ["Bench", "BenchReport", "applicable_faults", "parse_faults", "summary_lines"]
