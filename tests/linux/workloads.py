# SPDX-License-Identifier: GPL-2.0-only
"""The results the initramfs workloads print (tests/linux/ep-workload.h):
one line per run, "workload NAME: n=N mean=M p50=P p99=Q ticks", read
from a serial log into rows for a report (make bench's Linux rows).

    python3 tests/linux/workloads.py SERIAL...   prints one row per result
"""
import re
import sys
from typing import Dict, List

LINE = re.compile(r"^workload (?P<name>[a-z0-9_-]+): n=(?P<n>\d+) mean=(?P<mean>\d+) "
                  r"p50=(?P<p50>\d+) p99=(?P<p99>\d+) ticks\s*$", re.M)


def parse(text: str) -> List[Dict[str, object]]:
    """Every result line in text, in order; a malformed line is no row."""
    return [{"workload": m["name"], "n": int(m["n"]), "mean": int(m["mean"]),
             "p50": int(m["p50"]), "p99": int(m["p99"])}
            for m in LINE.finditer(text.replace("\r", ""))]


def main(paths: List[str]) -> int:
    print("| workload | n | mean | p50 | p99 |\n|---|---|---|---|---|")
    for path in paths:
        with open(path, errors="replace") as f:
            for r in parse(f.read()):
                print(f"| {r['workload']} | {r['n']} | {r['mean']} | {r['p50']} | {r['p99']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
