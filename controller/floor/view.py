"""``tablectl floor status``: the floor view as the database holds it."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from controller.floor.machines import machine_lines, machine_view
from controller.floor.store import Store
from controller.journal.record import format_ts


def floor_view(store: Store, *, now: datetime | None = None) -> dict[str, Any]:
    """Per table: game, last seq, duplicates dropped, rounds in the last hour, settled and
    voided rounds, hold (minor units, the house's net), voids by clause, irregularities; and
    the problems reported."""
    since = format_ts((now or datetime.now(timezone.utc)) - timedelta(hours=1))
    tables: dict[str, Any] = {}
    for table, site, game, seq, last_ts, duplicates in store.query(
            "SELECT table_id, site, game, last_seq, last_ts, duplicates FROM tables "
            "ORDER BY table_id"):
        tables[table] = {"site": site, "game": game, "last_seq": seq, "last_ts": last_ts,
                         "duplicates": duplicates, "rounds_last_hour": 0, "settled": 0,
                         "voided": 0, "hold": 0, "wagered": 0, "voids_by_clause": {},
                         "irregularities": {}, "online": None, "feed_online": None,
                         "behind": 0, "asked_from": None, "round": None, "state": None}
    for table, outcome, count, hold, wagered in store.query(
            "SELECT table_id, outcome, COUNT(*), SUM(hold), SUM(wagered) FROM rounds "
            "WHERE outcome IS NOT NULL GROUP BY table_id, outcome"):
        if table in tables:
            tables[table][outcome] = count
            tables[table]["hold"] += int(hold or 0)
            tables[table]["wagered"] += int(wagered or 0)
    for table, count in store.query(
            "SELECT table_id, COUNT(*) FROM rounds WHERE ended_ts >= ? GROUP BY table_id",
            (since,)):
        if table in tables:
            tables[table]["rounds_last_hour"] = count
    for table, clause, count in store.query(
            "SELECT table_id, clause, COUNT(*) FROM rounds WHERE outcome = 'voided' "
            "GROUP BY table_id, clause"):
        if table in tables:
            tables[table]["voids_by_clause"][clause or "(none)"] = count
    for table, kind, count in store.query(
            "SELECT table_id, COALESCE(kind, event), COUNT(*) FROM irregularities "
            "GROUP BY table_id, COALESCE(kind, event)"):
        if table in tables:
            tables[table]["irregularities"][kind] = count
    known: dict[str, int] = {}
    for table, online, body in store.query("SELECT table_id, online, body FROM statuses"):
        if table in tables:
            status = json.loads(body)
            tables[table]["feed_online"] = bool(online)
            tables[table]["round"], tables[table]["state"] = status.get("round"), \
                status.get("state")
            if isinstance(status.get("seq"), int):
                known[table] = status["seq"]
    for table, known_seq, asked_from in store.query(
            "SELECT table_id, known_seq, asked_from FROM behind"):
        if table in tables:
            known[table] = max(known.get(table, 0), int(known_seq))
            if int(known_seq) > tables[table]["last_seq"]:
                tables[table]["asked_from"] = asked_from
    for table, row in tables.items():
        # Online means the feed is connected AND the floor has all it sent: a table the floor
        # is behind on is never shown online (docs/feed.md, "Nothing lost").
        row["behind"] = max(0, known.get(table, 0) - row["last_seq"])
        if row["feed_online"] is not None:
            row["online"] = row["feed_online"] and row["behind"] == 0
    problems = [{"table": t, "seq": s, "kind": k, "detail": d} for t, s, k, d in store.query(
        "SELECT table_id, seq, kind, detail FROM problems ORDER BY at_ns DESC LIMIT 20")]
    return {"tables": tables, "problems": problems, "machines": machine_view(store)}


def view_lines(view: dict[str, Any]) -> list[str]:
    lines = [f"{'table':<12} {'online':<7} {'game':<24} {'seq':>8} {'r/h':>5} {'settled':>7} "
             f"{'voided':>6} {'hold':>10} {'dups':>5}"]
    for table, row in view["tables"].items():
        online = {True: "yes", False: "OFFLINE", None: "-"}[row["online"]]
        if row["behind"]:
            online = "BEHIND"
        lines.append(f"{table:<12} {online:<7} {row['game'] or '-':<24} {row['last_seq']:>8} "
                     f"{row['rounds_last_hour']:>5} {row['settled']:>7} {row['voided']:>6} "
                     f"{row['hold']:>10} {row['duplicates']:>5}")
        if row["behind"]:
            asked = f", asked to resend from {row['asked_from']}" if row["asked_from"] else ""
            lines.append(f"    behind: {row['behind']} records sent by the table not applied"
                         f"{asked}")
        for clause, count in row["voids_by_clause"].items():
            lines.append(f"    void {clause}: {count}")
        for kind, count in row["irregularities"].items():
            lines.append(f"    irregularity {kind}: {count}")
    lines += machine_lines(view.get("machines", {}))
    for problem in view["problems"]:
        lines.append(f"PROBLEM {problem['kind']}: table {problem['table']} seq "
                     f"{problem['seq']}: {problem['detail']}")
    return lines
