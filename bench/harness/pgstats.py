"""What PostgreSQL saw while the workers ran: its sessions sampled, and its statements counted.

Whether workers get in each other's way shows in the database first: sessions waiting for a lock
another holds, sessions "idle in transaction" (a worker doing Python work, or held back by its CPU
quota, inside an open transaction: every lock it took is held meanwhile), and claims that found the
row already taken (``FOR UPDATE SKIP LOCKED`` returning nothing). ``Sampler`` reads
``pg_stat_activity`` and ``pg_locks`` every few tens of milliseconds; ``pg_stat_statements`` counts
every statement with the rows it returned, so a claim that found its row taken is a call without a
row. The sampler's own backend is left out of the sessions, and its CPU is reported, so that the
database's CPU per move can be given without it.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.harness.workers import cpu_seconds

#: The statements whose calls without a row are claim conflicts: the pending message (the processor)
#: or due reply (the sender) asked for, and any others asked for with it, another worker had
#: claimed, or had finished, by the time this one asked. Matched on the start of the normalised
#: text pg_stat_statements keeps (with ``SKIP LOCKED``).
CLAIMS = {"inbound": ("SELECT id, raw, source, received_at, message_id, sha256, status, outcome,",),
          "outbound": ("SELECT id FROM outbound WHERE id ", "SELECT id, raw FROM outbound WHERE id ")}
_SAMPLE = ("SELECT state, wait_event_type, wait_event, 0 FROM pg_stat_activity"
           " WHERE datname = ANY(%s) AND pid <> pg_backend_pid()"
           " AND backend_type = 'client backend'"
           " UNION ALL SELECT 'ungranted', NULL, NULL, COUNT(*) FROM pg_locks WHERE NOT granted")


def enable_statements(postgres: Any) -> None:
    """Load pg_stat_statements into a ``tests.services.postgres.Postgres`` (a restart)."""
    conf = Path(postgres.data) / "postgresql.conf"
    if "pg_stat_statements" not in conf.read_text():
        with conf.open("a") as f:
            f.write("\n# bench/harness/pgstats.py\nshared_preload_libraries = 'pg_stat_statements'\n"
                    "pg_stat_statements.track_utility = on\n")
        postgres.stop()
        postgres.start()


def connect(dsn: str) -> Any:
    import psycopg

    return psycopg.connect(dsn, autocommit=True, application_name="pbem-bench-sampler")


def reset_statements(conn: Any) -> None:
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    conn.execute("SELECT pg_stat_statements_reset()")


def statements(conn: Any, databases: list[str]) -> list[dict[str, Any]]:
    """Every statement the workers sent to these databases since the reset, dearest first (the same
    statement in several databases summed)."""
    rows = conn.execute(
        "SELECT s.query, SUM(s.calls), SUM(s.rows), SUM(s.total_exec_time) FROM pg_stat_statements s"
        " JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = ANY(%s)"
        " GROUP BY s.query ORDER BY 4 DESC", (databases,)).fetchall()
    return [{"query": " ".join(q.split()), "calls": int(c), "rows": int(r), "ms": round(float(ms), 1)}
            for q, c, r, ms in rows
            if "pg_stat" not in q and "pg_locks" not in q]


def claim_conflicts(found: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """By claim: attempts, and conflicts (attempts that found the row taken)."""
    out = {}
    for name, starts in CLAIMS.items():
        rows = [s for s in found if s["query"].startswith(starts) and "SKIP LOCKED" in s["query"]]
        calls = sum(s["calls"] for s in rows)
        out[name] = {"attempts": calls, "conflicts": calls - sum(s["rows"] for s in rows)}
    return out


class Sampler:
    """``pg_stat_activity`` (the sessions of these databases) and ``pg_locks`` every ``interval``
    seconds in a thread of its own."""

    def __init__(self, dsn: str, databases: list[str], interval: float = 0.05) -> None:
        self.conn = connect(dsn)
        self.databases = databases
        self.backend = int(self.conn.execute("SELECT pg_backend_pid()").fetchone()[0])
        self.interval = interval
        self.samples = 0
        self.states: Counter[str] = Counter()  # state -> sessions summed over samples
        self.waits: Counter[str] = Counter()  # wait event of active sessions -> sessions summed
        self.lock_waits_max = 0
        self.ungranted = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._cpu = 0.0

    def start(self) -> None:
        self._cpu = cpu_seconds(self.backend)
        self._thread = threading.Thread(target=self._run, name="bench-pg-sampler", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            rows = self.conn.execute(_SAMPLE, (self.databases,)).fetchall()
            locks = 0
            for state, kind, event, count in rows:
                if state == "ungranted":
                    self.ungranted += int(count)
                    continue
                self.states[state or "?"] += 1
                if state == "active":
                    self.waits[f"{kind}:{event}" if kind else "running"] += 1
                    locks += kind == "Lock"
            self.lock_waits_max = max(self.lock_waits_max, locks)
            self.samples += 1
            self._stop.wait(max(0.0, self.interval - (time.monotonic() - started)))

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        n = max(self.samples, 1)
        lock = sum(v for k, v in self.waits.items() if k.startswith("Lock:"))
        return {"samples": self.samples,
                "sessions": {k: round(v / n, 2) for k, v in self.states.most_common()},
                "active_waits": {k: round(v / n, 3) for k, v in self.waits.most_common(8)},
                "lock_waits_mean": round(lock / n, 3), "lock_waits_max": self.lock_waits_max,
                "ungranted_locks_mean": round(self.ungranted / n, 3),
                "idle_in_transaction_mean": round(self.states.get("idle in transaction", 0) / n, 2),
                "sampler_cpu_seconds": round(cpu_seconds(self.backend) - self._cpu, 3)}

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        self.conn.close()
