"""The service process's life under systemd: start the wired table, then the control socket,
then READY (:mod:`.app`); sd_notify (:mod:`.sdnotify`); the wait before an exit over a resource
that may come back (:mod:`.backoff`). The top room of the service: nothing in it is imported by
the rooms below."""

from __future__ import annotations
