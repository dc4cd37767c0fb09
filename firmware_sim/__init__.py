"""Simulated device firmware: the shuffler and each shoe dialect, byte for byte.

Simulated devices implement :class:`firmware_sim.serve.SimDevice` and are served over a real pty
or a TCP socket by :mod:`firmware_sim.serve`, or in-process over a ``usb.backend.IBackend``.
"""

from __future__ import annotations
