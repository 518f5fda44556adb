"""``pbem status``: what the servers sharing the configured database are doing right now.

Mostly read from the database, so it answers from any machine that can reach it: the workers whose
heartbeat is recent (and those that went silent), who holds the IMAP and the scheduler roles, how
much mail waits to be processed and to be sent, and how old the oldest waiting message is. First,
though, it asks the server running on the configured data folder for its faults (the database
away, a full or read-only disk, the IMAP server or the relay failing) through its socket, which
answers when the database cannot; the exit status is 1 while there is a fault or the database
cannot be read.
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime, timedelta
from typing import Any

from pbem.cli.common import (
    SetupError,
    add_command,
    config_of,
    open_configured_store,
    out,
    setup_line,
)

#: A worker writes its heartbeat every few seconds; one silent this long is taken for dead.
ALIVE_SECONDS = 30
ROLES = ("imap", "scheduler")
#: A heartbeat further ahead of this clock than that was written before the clock stepped back.
AHEAD = timedelta(seconds=1)
#: How long to wait for such a worker's next heartbeat (pbem.daemon.roles.CHECK_SECONDS and more).
LOOK_AGAIN_SECONDS = 3.0


def ago(now: datetime, then: datetime | None) -> str:
    if then is None:
        return "-"
    seconds = max((now - then).total_seconds(), 0.0)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"


def beating(store: Any, workers: list[Any], now: datetime,
            look_again_seconds: float = LOOK_AGAIN_SECONDS) -> tuple[set[str], list[Any]]:
    """The ids of the workers whose heartbeat says they are alive, and the workers as last read.
    A heartbeat from the last ``ALIVE_SECONDS`` does; one from the future was written before the
    wall clock stepped back
    (every worker of a SQLite database runs on this machine, on this clock), and tells nothing by
    itself: a live worker writes its next one within seconds, a dead one never does. So such
    workers are looked at again after ``look_again_seconds``: alive when it changed. (Otherwise a
    worker that died just before an NTP correction of an hour would be shown alive for that hour.)"""
    alive_since = now - timedelta(seconds=ALIVE_SECONDS)
    alive = {w.id for w in workers if alive_since <= w.seen_at <= now + AHEAD}
    ahead = {w.id: w.seen_at for w in workers if w.seen_at > now + AHEAD}
    if ahead and look_again_seconds > 0:
        time.sleep(look_again_seconds)
        workers = store.workers()
        alive |= {w.id for w in workers if w.id in ahead and w.seen_at != ahead[w.id]}
    return alive, workers


def status_lines(store: Any, now: datetime, imap: bool,
                 look_again_seconds: float = LOOK_AGAIN_SECONDS) -> list[str]:
    """The report, one fact a line; ``imap``: whether the configuration watches a mailbox."""
    lines = []
    alive_since = now - timedelta(seconds=ALIVE_SECONDS)
    workers = store.workers()
    # PostgreSQL lists the sessions, and the locks, of the workers connected this instant: a
    # worker killed a moment ago is shown gone at once, not alive until its heartbeat ages.
    sessions = store.role_sessions(ROLES)
    if sessions is None:
        ids, workers = beating(store, workers, now, look_again_seconds)
        alive = [w for w in workers if w.id in ids]
        held = {w.id: w.roles for w in alive}
    else:
        alive = [w for w in workers if f"{w.host}:{w.pid}" in sessions]
        held = {w.id: sessions[f"{w.host}:{w.pid}"] for w in alive}
    lines.append(f"workers: {len(alive)} alive" + (f", {len(workers) - len(alive)} silent"
                                                   if len(workers) > len(alive) else ""))
    for w in workers:
        if w in alive:
            state = "alive"
        elif sessions is not None and w.seen_at >= alive_since:
            state = "gone (its database sessions ended: killed or cut off)"
        else:
            state = "silent (stopped without saying so?)"
        roles = f", holds {' and '.join(held[w.id])}" if held.get(w.id) else ""
        last = (f"last heartbeat {ago(now, w.seen_at)} ago" if w.seen_at <= now + AHEAD else
                f"last heartbeat {ago(w.seen_at, now)} ahead of this clock (written before it "
                "went back)")
        lines.append(f"  {w.host} pid {w.pid}: {state}, up {ago(now, w.started_at)}, {last}{roles}")
    for role in ROLES:
        if role == "imap" and not imap:
            continue
        holders = [f"{w.host} pid {w.pid}" for w in alive if role in held[w.id]]
        lines.append(f"{role} role: {', '.join(holders) if holders else 'nobody'}")
    figures = store.queue_figures()
    oldest = figures["oldest_pending"]
    lines.append(f"inbound: {figures['inbound_pending']} pending"
                 + (f", the oldest received {ago(now, oldest)} ago" if oldest else ""))
    due = figures["outbound_due_oldest"]
    lines.append(f"outbox: {figures['outbound_pending']} waiting"
                 + (f", the oldest due {ago(now, due)} ago" if due and due <= now else
                    (" (none due yet)" if due else "")))
    lines.append(f"games: {figures['games_active']} active")
    return lines


def fault_lines(report: dict[str, Any] | None, now: datetime, where: str) -> list[str]:
    """What the server on this data folder says of its faults; ``where``: the socket asked."""
    if report is None:
        return [f"this server: not running (nothing answers on {where})"]
    faults = report.get("faults") or []
    lines = [f"this server (pid {report.get('pid', '?')}): "
             + (f"{len(faults)} fault(s)" if faults else "no faults")]
    for fault in faults:
        since = datetime.fromisoformat(str(fault["since"]))
        lines.append(f"  FAULT: {fault['what']} for {ago(now, since)} (since {fault['since']}): "
                     f"{fault['reason']}; {fault['failures']} failed attempt(s) by "
                     f"{', '.join(fault['sources'])}")
    return lines


def cmd_status(args: argparse.Namespace, extra: list[str]) -> int:
    from pbem.outbox.wake import ask_status, socket_path
    from pbem.store.common import now_utc

    config = config_of(args)
    report = ask_status(config.data_dir)
    try:
        store = open_configured_store(config)
    except SetupError as exc:
        if report is None:  # no server here either: a wrong folder or config, exit 2 with the line
            raise
        store, problem = None, exc
    out(setup_line(config))
    for line in fault_lines(report, now_utc(), str(socket_path(config.data_dir))):
        out(line)
    faulty = bool(report and report.get("faults"))
    if store is None:
        out(f"database: {problem}")
        return 1
    try:
        for line in status_lines(store, now_utc(), imap=bool(config.imap.host)):
            out(line)
    except Exception as exc:  # the database went away meanwhile, or its disk fails
        from pbem.faults import is_fault, reason_of

        if not is_fault(exc):
            raise
        out(f"database: cannot be read now: {reason_of(exc)}")
        return 1
    finally:
        store.close()
    return 1 if faulty else 0


def register_all(sub: argparse._SubParsersAction) -> None:
    add_command(sub, "status", cmd_status,
                "the workers serving the configured database, their roles and the mail waiting")


__all__ = ["register_all", "status_lines"]
