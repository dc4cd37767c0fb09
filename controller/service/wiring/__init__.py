"""The wired table: the one place the pipeline is put together (:mod:`.pipeline`).

Journal, recovery, the table thread and its queue (:mod:`.tablethread`, with the flood counter
:mod:`.floodgate`), the dealing device (:mod:`.devices`) and the simulated dealer
(:mod:`.simdealer`), the request handler that turns control requests into table commands
(:mod:`.handler`, with the ways out of every wait, :mod:`.liveness`), the daily retention pass
(:mod:`.retention`) and the health probe's answer (:mod:`.health`). It uses the clock, the
control socket and the device operator, none of which imports it; the bench wires a table
through it as the service does."""

from __future__ import annotations
