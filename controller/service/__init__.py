"""The table service: configuration, lifecycle, the control socket and sd_notify.

This package wires the layers together and owns nothing of the rules (the house style):
:mod:`.config` turns a TOML file into frozen values, :mod:`.protocol` and :mod:`.control` are the
control socket, :mod:`.sdnotify` talks to systemd, and :mod:`.app` holds the :class:`Service`
that starts and stops it all.
"""

from __future__ import annotations
