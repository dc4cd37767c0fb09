"""What a bench run reports: rounds settled and voided, faults injected, and the net result per
bet against the house edge ``controller.analysis.odds`` computes for it.

Kept apart from the bench operator so the report and its human summary can be read, and tested,
without ptys, drivers or a table thread.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from controller.analysis.odds import game_odds
from controller.games.catalog import get_game


@dataclass(slots=True)
class BetTally:
    staked: int = 0
    net: int = 0
    wagers: int = 0


@dataclass(slots=True)
class BenchReport:
    game: str
    rounds: int
    seed: int
    settled: int = 0
    voided: int = 0
    voids_by_clause: Counter[str] = field(default_factory=Counter)
    hands_removed: int = 0
    faults_injected: Counter[str] = field(default_factory=Counter)
    bets: dict[str, BetTally] = field(default_factory=dict)
    stuck: int = 0
    unsettled: int = 0
    """Times the people acted without the device side having settled in time
    (:data:`~controller.bench.rig.SETTLE_SECONDS`): the run may then differ from another of
    the same seed."""
    command: str = ""
    """The command line that runs this bench again, seed included."""
    seconds: float = 0.0
    journal: dict[str, Any] | None = None
    protection_alerts: Counter[str] = field(default_factory=Counter)
    """Game-protection alerts by monitor (``--shuffler`` a faulty machine)."""

    def theoretical(self) -> dict[str, float]:
        """House edge per unit staked from ``game_odds`` (RWS-3CP "ante" is Ante with Play)."""
        return {bet: -float(o.house_edge) for bet, o in game_odds(get_game(self.game)).items()}

    def as_json(self) -> dict[str, Any]:
        theory = self.theoretical()
        return {
            "game": self.game, "rounds": self.rounds, "settled": self.settled,
            "voided": self.voided, "voids_by_clause": dict(sorted(self.voids_by_clause.items())),
            "hands_removed": self.hands_removed, "journal": self.journal, "seed": self.seed,
            "faults_injected": dict(sorted(self.faults_injected.items())), "stuck": self.stuck,
            "unsettled": self.unsettled, "command": self.command,
            "seconds": round(self.seconds, 3),
            "protection_alerts": dict(sorted(self.protection_alerts.items())),
            "rounds_per_second": round(self.rounds / self.seconds, 2) if self.seconds else None,
            "bets": {bet: {"wagers": t.wagers, "staked": t.staked, "net": t.net,
                           "net_per_unit": t.net / t.staked if t.staked else None,
                           "theoretical": theory.get(bet)}
                     for bet, t in sorted(self.bets.items())},
        }


def summary_lines(report: BenchReport) -> list[str]:
    """The human summary."""
    data = report.as_json()
    lines = [(f"{data['game']}: {data['rounds']} rounds in {data['seconds']:.1f} s "
              f"({data['rounds_per_second']} rounds/s), seed {data['seed']}"),
             (f"settled {data['settled']}, voided {data['voided']}, "
              f"hands removed {data['hands_removed']}, stuck {data['stuck']}"
              + (f", unsettled {data['unsettled']}" if data["unsettled"] else ""))]
    for clause, n in data["voids_by_clause"].items():
        lines.append(f"  void {n:>5}  {clause}")
    for fault, n in data["faults_injected"].items():
        lines.append(f"  fault {n:>4}  {fault}")
    for monitor, n in data["protection_alerts"].items():
        lines.append(f"  protection alert {n:>4}  {monitor}")
    lines.append("bet               wagers      staked         net   net/unit   theory")
    for bet, row in data["bets"].items():
        per = "-" if row["net_per_unit"] is None else f"{row['net_per_unit']:+.4f}"
        theory = "-" if row["theoretical"] is None else f"{row['theoretical']:+.4f}"
        lines.append(f"{bet:<16}{row['wagers']:>8}{row['staked']:>12}{row['net']:>12}"
                     f"{per:>11}{theory:>9}")
    if data["journal"]:
        lines.append(f"journal: {data['journal']['directory']} ({data['journal']['records']} "
                     f"records)")
    if data["command"]:
        lines.append(f"rerun: {data['command']}")
    return lines


__all__ = ["BenchReport", "BetTally", "summary_lines"]
