"""How often the conformance kit is right: conformant device variants run N times each (the
issue's acceptance figure is 20 of 20), and every mutant once.

The variants are those of ``testbed/conformance/devices.py`` and ``mutants.py`` (the
suite runs each conformant one 3 times and each mutant once, to stay CI-sized); here each
conformant variant runs the whole matrix of its device (``--rows listed`` keeps to the rows the
suite runs against it), on real ptys, and the figures are reported per variant: passes of runs,
the rows that ever failed and why. Run it on a loaded machine as well: the kit's timing
tolerances are the document's figures plus a margin, and a conformant device must pass anyway.

Run: ``python benchmarks/conformance.py [--runs 20] [--rows all|listed] [--only NAME,...]
[--json]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from drivers.conformance import KIT_VERSION, Verdict  # noqa: E402
from testbed.conformance.bench import run_kit, scenarios_for  # noqa: E402
from testbed.conformance.devices import CONFORMANT, REFERENCE, Variant  # noqa: E402
from testbed.conformance.mutants import MUTANTS  # noqa: E402


def run_conformant(variant: Variant, runs: int, all_rows: bool) -> dict[str, Any]:
    """Run ``variant`` ``runs`` times; every row must pass every time."""
    rows = None if all_rows else variant.rows
    passed = 0
    failures: Counter[str] = Counter()
    started = time.monotonic()
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            results = run_kit(variant.make(), "pty", Path(tmp),
                              scenarios_for(variant.device, rows))
        bad = {k: r.detail for k, r in results.items() if r.verdict is not Verdict.PASS}
        passed += not bad
        failures.update(f"{k}: {d}" for k, d in bad.items())
    return {"variant": variant.name, "runs": runs, "passed": passed,
            "seconds_per_run": round((time.monotonic() - started) / runs, 1),
            "failures": dict(failures)}


def run_mutant(variant: Variant) -> dict[str, Any]:
    """Run ``variant`` once; its row must fail naming its clause."""
    with tempfile.TemporaryDirectory() as tmp:
        results = run_kit(variant.make(), "pty", Path(tmp),
                          scenarios_for(variant.device, variant.rows))
    row = results[str(variant.fails)]
    caught = row.verdict is Verdict.FAIL
    right = caught and row.detail.startswith(f"protocols.md {variant.clause}:")
    return {"variant": variant.name, "row": variant.fails, "clause": variant.clause,
            "caught": caught, "right_clause": right, "detail": row.detail}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20,
                        help="runs of each conformant variant (0: the mutants only)")
    parser.add_argument("--rows", choices=("all", "listed"), default="all")
    parser.add_argument("--only", help="comma-separated variant names")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    only = set(args.only.split(",")) if args.only else None
    conformant = [run_conformant(v, args.runs, args.rows == "all")
                  for v in REFERENCE + CONFORMANT
                  if args.runs > 0 and (only is None or v.name in only)]
    mutants = [run_mutant(v) for v in MUTANTS if only is None or v.name in only]
    report = {"kit_version": KIT_VERSION, "conformant": conformant, "mutants": mutants,
              "mutants_caught_right_clause": sum(m["right_clause"] for m in mutants),
              "mutants_total": len(mutants)}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for c in conformant:
            print(f"{c['variant']:28} {c['passed']:3}/{c['runs']} passed "
                  f"({c['seconds_per_run']} s a run)")
            for why, n in c["failures"].items():
                print(f"    {n}x {why}")
        for m in mutants:
            mark = "ok " if m["right_clause"] else "BAD"
            print(f"{mark} {m['variant']:32} {m['row']:22} {m['clause']:4} {m['detail'][:90]}")
        print(f"mutants failed with the right clause: {report['mutants_caught_right_clause']}"
              f"/{report['mutants_total']}")
    ok = all(c["passed"] == c["runs"] for c in conformant) and \
        report["mutants_caught_right_clause"] == report["mutants_total"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
