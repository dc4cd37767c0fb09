"""Our framed link protocol (docs/protocols.md): framing, messages and the host side of the link.

Layers, each knowing nothing of the one above: :mod:`.crc` and :mod:`.framing` (bytes <-> frames,
resynchronising on garbage), :mod:`.messages` (frames <-> frozen dataclasses), :mod:`.link`
(request/response matching, retries, event acknowledgement, heartbeat supervision).
"""
