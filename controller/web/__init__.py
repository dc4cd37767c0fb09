"""``tablectl web``: the dealer's screen and the surveillance console, in a browser.

A separate process from the table service (docs/web.md): it reads the journal read-only, keeps a
rebuildable SQLite index of it for search (never trusted for integrity), and follows the live
table through the control socket. Nothing here can change the table.
"""
