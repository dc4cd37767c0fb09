"""``tablectl floor web``: the floor page a pit boss reads at a glance (docs/floor-page.md).

Every table as a tile, the shift's and the day's figures per table and per game, and a chart,
all read from the floor's database (what the tables' feeds sent, nothing more: never a card),
served with the web's own accounts, sessions, TLS, CSRF and origin rules
(:mod:`controller.web`)."""
