"""Game protection from the cards alone (issue 15): monitors over the dispensed card stream.

- :mod:`.stats`: exact null distributions (valleys, Eulerian, hand categories, chi-square);
- :mod:`.sequential`: CUSUM and batch chi-square decisions with a stated false-alarm rate;
- :mod:`.feed`: the order the shuffler was fed, which the order monitors judge against;
- :mod:`.likelihood`: the exact likelihood of the dealt cards under a one-pass shelf shuffle;
- :mod:`.monitors`: ledger, repeat, sortedness, one-pass (valleys and likelihood), packet,
  position, categories, position run;
- :mod:`.diagnosis`: the fault a finding points to, one alert per episode;
- :mod:`.limits`: their limits, measured by ``benchmarks/protection.py``;
- :mod:`.guard`: the monitors on the table's card stream (live) or a journal's (offline);
- :mod:`.tally`: the totals the surveillance report draws;
- :mod:`.risk`: a flagged machine's risk in money per bet (offline, the report only: it
  is not imported here, so the table's guard never loads it).

Their evidence carried across a restart (the journal's last decks fed through a fresh guard)
is the service's (:mod:`controller.service.wiring.warmup`): it reads the journal, which sits
above game protection, so nothing here imports the journal.

Pure Python with no third-party import: it runs on the Pi beside the table. The offline report
(:mod:`controller.analysis.integrity`) uses numpy/matplotlib from the ``analysis`` extra.
"""

from __future__ import annotations

from controller.protection.guard import Guard, TableGuard
from controller.protection.monitors import Finding, MonitorId

__all__ = ["Finding", "Guard", "MonitorId", "TableGuard"]
