"""tablectl: the table-side controller for casino card tables.

The package is layered (the house style): ``games`` holds the rule sets as data plus
small pure functions, ``settlement`` turns hands and wagers into results, and the CLI sits on top.
Nothing in ``controller`` imports ``serial`` or ``usb``: device bytes stay in ``drivers``.
"""

from __future__ import annotations

__version__ = "0.1.0"
