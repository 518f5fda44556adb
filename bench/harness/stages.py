"""Per-move stages, read back from the daemon: its timestamps, tied to moves through its store.

The recorder in the daemon's process knows inbound row ids, the benchmark knows Message-IDs and when
it sent each move; the store's ``inbound`` table maps one to the other. Read-only, after the timed
part, so the measurement does not contend for the database.
"""

from __future__ import annotations

import sqlite3
import statistics
from pathlib import Path
from typing import Any

from bench.harness.report import rounded, summary


def inbound_message_ids(db: Path) -> dict[int, str]:
    """Read-only (``mode=ro``): the daemon may still be running; the benchmark must not lock it out."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {row[0]: row[1] for row in conn.execute("SELECT id, message_id FROM inbound")}
    finally:
        conn.close()


def normalise_id(value: str) -> str:
    """The Message-ID as the store keeps it, so the benchmark's keys match the ``inbound`` rows."""
    from bench.harness.pbem_api import normalise_message_id

    return normalise_message_id(value) or value


def stage_split(report: dict[str, Any], db: Path, moves: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per-move stage latencies from the daemon's timestamps.

    ``moves`` maps a move mail's Message-ID to a dict with ``sent`` (the client began sending or
    appending it) and ``replies`` (arrival times of its two replies at the sink)."""
    ids = inbound_message_ids(db)
    accepted = {ids.get(e[2]): e for e in report["events"]["accept"] if e[3]}
    processed = {ids.get(e[2]): e for e in report["events"]["process"]}
    stages: dict[str, list[float]] = {"submit_to_stored": [], "stored_to_processing": [],
                                      "processing": [], "processed_to_replies_at_sink": []}
    for message_id, move in moves.items():
        acc, proc = accepted.get(message_id), processed.get(message_id)
        if acc is None or proc is None or len(move["replies"]) < 2:
            continue
        stages["submit_to_stored"].append(acc[1] - move["sent"])
        stages["stored_to_processing"].append(proc[0] - acc[1])
        stages["processing"].append(proc[1] - proc[0])
        stages["processed_to_replies_at_sink"].append(max(move["replies"]) - proc[1])
    events = report["events"]

    def busy(kind: str) -> float:
        return round(sum(e[1] - e[0] for e in events[kind]), 3)

    sends = [e for e in events["send"] if e[3]]
    return {
        "stage_seconds": {k: rounded(summary(vals)) for k, vals in stages.items()},
        "busy_seconds": {"store_accept": busy("accept"), "process_one": busy("process"),
                         "send_batches": round(sum(e[1] - e[0] for e in sends), 3)},
        "send_batches": {"count": len(sends), "rows": sum(e[3] for e in sends),
                         "mean_rows": round(statistics.fmean([e[3] for e in sends]), 1) if sends else 0},
        "daemon_cpu_seconds": report["process_cpu"],
        "daemon_thread_cpu_seconds": dict(sorted(report["thread_cpu"].items(),
                                                 key=lambda kv: -kv[1])),
        "profiles": report["profiles"],
    }

