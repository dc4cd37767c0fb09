"""Simulated USB devices served in-process through :class:`firmware_sim.usb.backend.SimUsbBackend`."""

from __future__ import annotations
