"""``tablectl integrity report``: the game-protection monitors over journals, for surveillance.

Reads the recorded inputs (every shuffle and every card the table saw, in order), runs the same
monitors the service runs live (:mod:`controller.protection`), and writes plots (PNG and SVG)
and tables: cards by dealing position as a heat map, the valley histogram against the exact
distribution for a random deck, the lowest card's place in the three-card sets, the hand
categories against the exact counts of the 22,100 hands, and every alarm (those the journal
recorded live, and those this pass finds).

numpy and matplotlib come from the ``analysis`` extra (``pip install 'tablectl[analysis]'``):
the service on the Pi never imports them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from controller.analysis.risk import as_json as risk_json
from controller.analysis.risk import markdown as risk_markdown
from controller.errors import TablectlError
from controller.journal.codec import InputKind, decode_input
from controller.journal.record import Record
from controller.journal.recorder import SESSION_STARTED
from controller.protection.risk import RiskReport
from controller.protection.stats import valley_pmf
from controller.protection.feed import Feed
from controller.protection.tally import Surveyor, Totals

PLOTS = ("positions", "valleys", "packets", "categories")
_INPUTS = {InputKind.DEVICE.value: {"ShuffleDone", "CardSetDispensed", "CardRead"},
           InputKind.COMMAND.value: {"ConfirmShuffle"}}
SURVEYED_EVENTS = frozenset([*_INPUTS, "protection_alert", SESSION_STARTED])
"""The record kinds :func:`survey` reads: a report over a long journal parses only these (about
one record in four of a dealing table's; ``session_started`` for the game and its boxes, which
the risk section needs), and leaves proving the journal intact to
``tablectl journal verify``."""


class AnalysisUnavailable(TablectlError):
    """The ``analysis`` extra is not installed."""


@dataclass(slots=True)
class Survey:
    totals: Totals
    recorded_alerts: list[dict[str, Any]] = field(default_factory=list)
    tables: int = 0
    games: dict[str, int] = field(default_factory=dict)
    """Game id -> boxes of the table's layout, from each ``session_started``."""
    risk: list[RiskReport] | None = None
    """The risk section (:mod:`controller.analysis.risk`): set only when a monitor flagged a
    biased order; ``None`` leaves it out of the report."""


def survey(records: Iterable[Record], feed: Feed = Feed.COLLECTED_REVERSED) -> Survey:
    """One pass over the records: the card stream into the monitors (judging each deck
    against the order ``feed`` says the shuffler was fed), the live alerts kept."""
    surveyor = Surveyor(feed)
    recorded: list[dict[str, Any]] = []
    tables: set[str] = set()
    games: dict[str, int] = {}
    for record in records:
        tables.add(record.table_id)
        kinds = _INPUTS.get(record.event_type)
        if kinds is not None:
            if record.payload.get("type") in kinds:
                surveyor.see(decode_input(record.event_type, record.payload))
        elif record.event_type == "protection_alert":
            recorded.append({"seq": record.seq, **record.payload})
        elif record.event_type == SESSION_STARTED:
            layout = record.payload.get("layout") or {}
            if isinstance(layout.get("game"), str):
                games[layout["game"]] = len(layout.get("boxes") or ())
    return Survey(surveyor.totals(), recorded, len(tables), games)


def render(data: Survey, out: Path) -> list[Path]:
    """Write the plots (PNG and SVG), ``report.md`` and ``report.json`` into ``out``."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError as error:
        raise AnalysisUnavailable(
            f"the integrity report needs numpy and matplotlib: pip install "
            f"'tablectl[analysis]' ({error})") from error
    out.mkdir(parents=True, exist_ok=True)
    totals = data.totals
    written: list[Path] = []

    def save(fig: Any, name: str) -> None:
        for ax in fig.axes:
            if ax.get_legend_handles_labels()[0]:
                ax.legend()
        fig.tight_layout()
        for suffix in ("png", "svg"):
            path = out / f"{name}.{suffix}"
            fig.savefig(path, dpi=110)
            written.append(path)
        plt.close(fig)

    grid = np.array(totals.positions, dtype=float)
    dealt = grid.sum(axis=1, keepdims=True)
    ratio = np.divide(grid * 52, dealt, out=np.ones_like(grid), where=dealt > 0)
    fig, ax = plt.subplots(figsize=(10, 4))
    image = ax.imshow(ratio, aspect="auto", cmap="coolwarm", vmin=0, vmax=2)
    ax.set_xlabel("card (pack order: spades, hearts, diamonds, clubs; 2..A)")
    ax.set_ylabel("dealing position")
    ax.set_title(f"Cards by dealing position, observed / expected ({totals.decks} decks)")
    fig.colorbar(image, ax=ax)
    save(fig, "positions")

    def pair_bars(ax: Any, observed: list[float], expected: list[float], label: str) -> Any:
        xs = np.arange(len(observed))
        ax.bar(xs - 0.2, observed, width=0.4, label="observed")
        ax.bar(xs + 0.2, expected, width=0.4, label=label)
        return xs

    fig, ax = plt.subplots(figsize=(6, 4))
    length = max(totals.valleys, key=lambda n: sum(totals.valleys[n].values()), default=0)
    counts = totals.valleys.get(length, {})
    decks = sum(counts.values())
    pmf = valley_pmf(length) if length else (1.0,)
    pair_bars(ax, [counts.get(k, 0) for k in range(len(pmf))], [p * decks for p in pmf],
              "random deck (exact)")
    ax.set_xlabel(f"valleys among the {length} cards dispensed")
    ax.set_ylabel("decks")
    ax.set_title(f"Valleys per deck ({decks} decks of {length} cards)")
    save(fig, "valleys")

    fig, ax = plt.subplots(figsize=(5, 4))
    sets = sum(totals.packet)
    ax.bar(["first", "second", "third"], totals.packet, label="observed")
    ax.axhline(sets / 3, color="black", linestyle="--", label="uniform")
    ax.set_ylabel("three-card sets")
    ax.set_title(f"Place of the lowest card ({sets} sets)")
    save(fig, "packets")

    fig, ax = plt.subplots(figsize=(7, 4))
    names = list(totals.categories)
    xs = pair_bars(ax, [totals.categories[n][0] for n in names],
                   [totals.categories[n][1] for n in names], "exact (22,100 hands)")
    ax.set_xticks(xs, names, rotation=20)
    ax.set_yscale("log")
    ax.set_title(f"Hand categories ({totals.hands} hands)")
    save(fig, "categories")

    (out / "report.json").write_text(json.dumps(summary_json(data), indent=1, default=str)
                                     + "\n")
    (out / "report.md").write_text(markdown(data))
    written += [out / "report.json", out / "report.md"]
    return written


def summary_json(data: Survey) -> dict[str, Any]:
    """``report.json`` (and ``--json``): the totals, the alarms and, when a biased order was
    flagged, the risk in money per bet."""
    out: dict[str, Any] = {
        "totals": {k: v for k, v in asdict(data.totals).items() if k != "findings"},
        "findings": [_finding_json(f) for f in data.totals.findings],
        "recorded_alerts": data.recorded_alerts}
    if data.risk is not None:
        out["risk"] = risk_json(data.risk)
    return out


def _finding_json(found: Any) -> dict[str, Any]:
    return {"monitor": found.monitor.value, "statistic": found.statistic,
            "threshold": found.threshold, "decks": found.decks, "detail": found.detail,
            "holds": found.holds}


def markdown(data: Survey) -> str:
    totals = data.totals
    lines = ["# Game-protection report", "",
             f"{totals.decks} decks, {totals.cards} cards, {totals.hands} three-card hands "
             f"from {data.tables} table(s).", "",
             "## Alarms found over the journal", ""]
    lines += [f"- deck {f.decks}: **{f.monitor.value}** {f.statistic} (threshold "
              f"{f.threshold}): {f.detail}" for f in totals.findings] or ["- none"]
    lines += ["", "## Alerts the service recorded live", ""]
    lines += [f"- seq {a['seq']}, round {a.get('round')}: **{a['monitor']}** "
              f"{a['statistic']} (threshold {a['threshold']}) after {a['decks']} decks: "
              f"{a['detail']}" for a in data.recorded_alerts] or ["- none"]
    lines += ["", "## Hand categories", "", "| category | observed | exact expectation |",
              "|---|---:|---:|"]
    lines += [f"| {name} | {o} | {e:.1f} |" for name, (o, e) in totals.categories.items()]
    sets = sum(totals.packet)
    lines += ["", "## Place of the lowest card in a set", "", "| first | second | third | "
              "uniform |", "|---:|---:|---:|---:|",
              f"| {' | '.join(str(n) for n in totals.packet)} | {sets / 3:.1f} |", ""]
    if data.risk is not None:
        lines += risk_markdown(data.risk)
    lines += [f"![{name}]({name}.svg)" for name in PLOTS]
    return "\n".join(lines) + "\n"
