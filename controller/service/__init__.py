"""The table service: a base the rooms share, and one room per concern.

This package wires the layers together and owns nothing of the rules (the house style). The
modules here are the base, below every room: :mod:`.config` turns a TOML file into frozen
values (read with :mod:`.tomlread`, with the bounds of :mod:`.policy`), :mod:`.protocol` is the
control socket's language, :mod:`.errors` the service's error tree, :mod:`.keyfile` the
journal key's checks and :mod:`.visibility` who may see a face-down card. Above them, lowest
first (``tests/test_layout.py`` holds the order, docs/architecture.md draws it):

- :mod:`.clock`: trusted time, the kernel clock and the monitor that reports it;
- :mod:`.control`: the control socket, its connections, access and client;
- :mod:`.operator`: the device operator, the device side of a round;
- :mod:`.wiring`: the wired table, from the journal to the device and the request handler;
- :mod:`.lifecycle`: the process's life under systemd (start, READY, watchdog, stop, backoff).
"""

from __future__ import annotations
