"""The control socket: the server (:mod:`.server`), what one peer may cost (:mod:`.connections`),
who a peer is and what it may send (:mod:`.access`), and the client (:mod:`.client`).

Imports only the service's base: the table is plugged into the server as a handler by
:mod:`controller.service.wiring`, so the socket knows nothing of the table."""

from __future__ import annotations
