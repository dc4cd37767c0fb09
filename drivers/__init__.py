"""Device drivers: the electronic card shuffler and the dealing shoe, over pyserial and pyusb.

Layers (the house style): ``transport`` moves bytes, ``<protocol>/framing`` finds frames,
``<protocol>/messages`` encodes and decodes them, ``<device>`` runs commands, retries and
heartbeats and emits the typed, frozen events of :mod:`drivers.events` onto one queue. Nothing here
knows the rules of a game.
"""

from __future__ import annotations
