#!/usr/bin/env python3
"""Hostile-mail benchmark: what one mail can cost the server, in CPU and in memory.

1. **Reading cost of the worst mails the limits allow.** Each mail of
   ``tests.e2e.mutations.hostile()`` (a 2 MB tag bomb, 59,000 short lines, 20 levels of nested
   multiparts, 99 broken JSON attachments, 495 header fields, a 120 KB To header, ...) is read the
   way the processor reads it (the limits' scan, then the full reader or only the header block)
   ``--repeat`` times; the CPU time (thread time) of the slowest reading is reported. Goal: <= 100 ms.
2. **A fuzz run against ``pbem serve``.** ``--mails`` mutated real mails (see
   ``tests/e2e/fuzzing.py``) through the SMTP listener and ``pbem deliver``, while 8 SMTP sessions
   at once send 1.9 MB of empty lines each (the input that made aiosmtpd keep an object per line).
   Reported: the slowest reading time in the server's log, and the peak resident memory (VmHWM)
   of the listener process and of the processor process. Goal: <= 300 MB each.

Usage::

    .venv/bin/python bench/fuzz_mail.py [--mails N] [--repeat R] [--tmpfs] [--json] [--check]

Everything listens on 127.0.0.1 and stops by itself; the temporary folder is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import smtplib
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pbem.config import LimitsConfig  # noqa: E402
from pbem.reading.incoming import read_headers, read_mail  # noqa: E402
from pbem.reading.limits import check_limits  # noqa: E402
from tests.e2e.fuzzing import CORPUS, SERVER, FuzzRun  # noqa: E402
from tests.e2e.mutations import hostile  # noqa: E402

READ_GOAL_MS = 100.0
RSS_GOAL_MB = 300.0
NAMES = ["2 MB of <b>x tags", "59,000 lines of <div>", "59,000 lines 'games'", "2 MB of move words",
         "20 nested multiparts, 2,900 lines", "19 nested message/rfc822", "99 broken JSON attachments",
         "495 header fields of encoded words", "To header of 12,000 addresses", "Subject of 31,000 'Re:'",
         "59,000 format=flowed lines", "14,000 quote headers", "over the size limit"]


def read_cost(repeat: int) -> list[dict[str, object]]:
    limits = LimitsConfig()
    rows = []
    for name, raw in zip(NAMES, hostile(), strict=True):
        times = []
        for _ in range(repeat):
            started = time.thread_time()
            exceeded = check_limits(raw, limits, 2_000_000)
            if exceeded is None:
                read_mail(raw, own_addresses=[SERVER])
            else:
                read_headers(raw, own_addresses=[SERVER])
            times.append((time.thread_time() - started) * 1000)
        rows.append({"mail": name, "bytes": len(raw), "limit": exceeded.name if exceeded else None,
                     "min_ms": round(min(times), 1), "max_ms": round(max(times), 1)})
    return rows


def burst(port: int, sessions: int = 8) -> None:
    """Sessions at once, each 1.9 MB of empty lines: what the listener holds while DATA arrives."""
    data = b"From: burst@example.org\r\nTo: pbem@localhost\r\nSubject: lines\r\n\r\n" + b"\r\n" * 950_000

    def send(n: int) -> None:
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=300) as smtp:
                smtp.sendmail("burst@example.org", [SERVER], data + b"%d\r\n" % n)
        except smtplib.SMTPException:
            pass

    threads = [threading.Thread(target=send, args=(n,)) for n in range(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


class BurstRun(FuzzRun):
    """The fuzz run, with the burst of big sessions sent as soon as the server listens."""

    def _smtp(self, mails: list[bytes], refused: list[str]) -> None:
        if not getattr(self, "_burst_started", False):
            self._burst_started = True
            burst(self.port)
        super()._smtp(mails, refused)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mails", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5, help="readings of each worst mail")
    parser.add_argument("--tmpfs", action="store_true", help="data in /dev/shm (no disk flushes)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true", help="exit 1 when a goal is missed")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"the mail corpus is not at {CORPUS}", file=sys.stderr)
        return 2

    worst = read_cost(args.repeat)
    folder = Path(tempfile.mkdtemp(prefix="pbem-fuzz-bench-", dir="/dev/shm" if args.tmpfs else None))
    try:
        result = BurstRun(folder, args.mails).run(timeout=1800)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    reads = sorted(result.reads_ms)
    report = {
        "machine": f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
                   f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}",
        "date": time.strftime("%Y-%m-%d"),
        "worst_mails": worst,
        "worst_read_ms": max(row["max_ms"] for row in worst),
        "fuzz": {"mails": result.mails, "seconds": round(result.seconds, 1),
                 "mails_per_second": round(result.mails / result.seconds, 1), "statuses": result.statuses,
                 "slowest_read_ms": reads[-1], "p99_read_ms": reads[int(len(reads) * 0.99)],
                 "median_read_ms": statistics.median(reads), "peak_rss_mb": result.peak_mb,
                 "tracebacks": result.log.count("Traceback")},
    }
    missed = []
    if max(report["worst_read_ms"], reads[-1]) > READ_GOAL_MS:
        missed.append(f"a reading took more than {READ_GOAL_MS:g} ms")
    if max(result.peak_mb.values()) > RSS_GOAL_MB:
        missed.append(f"a process went over {RSS_GOAL_MB:g} MB")
    if report["fuzz"]["tracebacks"] or result.statuses.get("failed") or result.statuses.get("pending"):
        missed.append("a message failed or was left pending")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{report['machine']}, {report['date']}")
        print("Reading the worst mails the limits allow (CPU ms, min..max of "
              f"{args.repeat}; goal <= {READ_GOAL_MS:g}):")
        for row in worst:
            refused = f"  (refused: {row['limit']})" if row["limit"] else ""
            print(f"  {row['mail']:<36} {row['bytes']:>9} bytes  "
                  f"{row['min_ms']:6.1f}..{row['max_ms']:6.1f} ms{refused}")
        fuzz = report["fuzz"]
        print(f"Fuzz run: {fuzz['mails']} mails in {fuzz['seconds']} s ({fuzz['mails_per_second']}/s), "
              f"{fuzz['statuses']}, {fuzz['tracebacks']} tracebacks")
        print(f"  reading in the server: slowest {fuzz['slowest_read_ms']:.1f} ms, p99 "
              f"{fuzz['p99_read_ms']:.1f} ms, median {fuzz['median_read_ms']:.2f} ms")
        print(f"  peak RSS: listener {fuzz['peak_rss_mb']['listener']:.0f} MB, processor "
              f"{fuzz['peak_rss_mb']['processor']:.0f} MB (goal <= {RSS_GOAL_MB:g} MB each)")
        for line in missed:
            print(f"GOAL MISSED: {line}")
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
