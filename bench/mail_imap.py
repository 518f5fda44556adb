"""Mail scenario 2: latency from IMAP delivery to the replies leaving (``bench/mail.py --only imap``).

A private Dovecot holds the server's mailbox, the daemon watches it with IDLE (SMTP listener off).
Moves are APPENDed at R per second (one IMAP connection; the timestamp is taken just before each
APPEND) for S seconds; per move the time until both replies reached the sink is measured. A steady
rate, unlike the SMTP scenario's burst, so the latency is that of a server that keeps up. Goals:
p50 <= 0.5 s, p99 <= 2 s.
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from bench.harness.daemon import PySpy, start_with_relay
from bench.harness.players import answer, make_tables, raw_bytes, setup_games
from bench.harness.report import own_cpu, percentile, rounded, say, summary
from bench.harness.sink import all_replied
from bench.harness.stages import normalise_id, stage_split

NAME = "imap"
TITLE = "IMAP latency"
GOAL_P50_SECONDS = 0.5
GOAL_P99_SECONDS = 2.0


def table_row(imap: dict[str, Any]) -> str:
    lat = imap["latency_seconds"]
    return (f"| IMAP delivery → both replies at relay, {imap['rate_per_second']:g} moves/s for "
            f"{imap['seconds']:g} s ({imap['moves_answered']}/{imap['moves_sent']} answered) | "
            f"p50 {lat['p50']:.3f} s, p90 {lat['p90']:.3f} s, p99 {lat['p99']:.3f} s, "
            f"max {lat['max']:.3f} s | p50 ≤ {GOAL_P50_SECONDS:g} s, p99 ≤ {GOAL_P99_SECONDS:g} s "
            f"| {'yes' if imap['goal_met'] else 'NO'} |")


def run(args: argparse.Namespace, workdir: Path, cleanup: list[Callable[[], None]]) -> dict[str, Any]:
    from imapclient import IMAPClient

    from tests.services.dovecot import Dovecot

    dovecot = Dovecot()
    cleanup.append(dovecot.close)
    user, password = "pbem", secrets.token_hex(8)
    dovecot.add_user(user, password)
    doors = {"smtp": {"enabled": False},
             "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                      "username": user, "password": password, "idle": True}}
    sink, daemon, data_dir = start_with_relay("imap", doors, workdir, args.log_level, cleanup)

    appender = IMAPClient(dovecot.host, port=dovecot.port, ssl=False, timeout=30)
    cleanup.append(lambda: _imap_logout(appender))
    appender.login(user, password)

    def append_all(messages: list[EmailMessage]) -> None:
        for message in messages:
            appender.append("INBOX", raw_bytes(message))

    total_moves = max(1, round(args.rate * args.seconds))
    count = args.imap_games or min(args.games, total_moves)
    say(f"[imap] setting up {count} games by IMAP APPEND ...")
    started = time.monotonic()
    tables = make_tables(count, "i")
    your_move = setup_games(tables, append_all, sink, timeout=max(120.0, count * 0.5))
    setup_seconds = time.monotonic() - started

    players: dict[str, Any] = {}
    ready: deque[tuple[tuple[str, int], EmailMessage]] = deque()
    for game, arrival in sorted(your_move.items()):
        reply = answer(arrival, players)
        assert reply is not None
        ready.append(((game, (arrival.ply or 0) + 1), reply))
    moves: dict[tuple[str, int], dict[str, Any]] = {}
    moves_lock = threading.Lock()
    stop_players = threading.Event()
    base = sink.count()

    def keep_playing() -> None:
        """When a game's next "Your move" arrives, prepare the answer (only needed when there are
        fewer games than moves to send)."""
        seen = base
        while not stop_players.is_set():
            arrivals = sink.since(seen)
            seen += len(arrivals)
            for a in arrivals:
                if a.headline.startswith("Your move") and a.game and a.ply:
                    reply = answer(a, players)
                    if reply is not None:
                        ready.append(((a.game, a.ply + 1), reply))
            stop_players.wait(0.05)

    player_thread = threading.Thread(target=keep_playing, name="bench-players", daemon=True)
    if total_moves > count:
        player_thread.start()

    say(f"[imap] setup took {setup_seconds:.1f} s; now {total_moves} moves at {args.rate:g}/s "
        f"for {args.seconds:g} s ...")
    spy = PySpy(daemon.pid, Path(args.py_spy) / "imap.txt") if args.py_spy else None
    if spy:
        cleanup.append(spy.stop)
    daemon.call("mark", args.profile and str(Path(args.profile) / "imap"))
    cpu_before = own_cpu()
    interval = 1.0 / args.rate
    t0 = time.monotonic() + 0.1
    starved = 0
    late: list[float] = []
    append_seconds: list[float] = []
    for k in range(total_moves):
        due = t0 + k * interval
        while (wait := due - time.monotonic()) > 0:
            time.sleep(min(wait, 0.05))
        if not ready:
            starved += 1
            deadline = time.monotonic() + 5
            while not ready and time.monotonic() < deadline:
                time.sleep(0.005)
            if not ready:
                break
        key, reply = ready.popleft()
        data = raw_bytes(reply)
        before = time.monotonic()
        with moves_lock:
            moves[key] = {"sent": before, "replies": [],
                          "message_id": normalise_id(reply["Message-ID"])}
        appender.append("INBOX", data)
        after = time.monotonic()
        append_seconds.append(after - before)
        late.append(before - due)
    last_sent = time.monotonic()

    timed_out = False
    try:
        arrivals = sink.wait_until(all_replied(base, moves), 30.0, "all replies")
    except TimeoutError:
        timed_out = True
        arrivals = sink.since(0)
    stop_players.set()
    driver_cpu = own_cpu() - cpu_before
    sink.wait_quiet(0.5, 10.0)  # the sender marks the last rows sent after the sink has them
    report = daemon.call("report", timeout=120)
    if spy:
        report["profiles"]["py-spy"] = spy.stop()
    for a in arrivals[base:]:
        move = moves.get((a.game, a.ply))  # type: ignore[arg-type]
        if move is not None:
            move["replies"].append(a.at)
    complete = [m for m in moves.values() if len(m["replies"]) >= 2]
    both = [max(m["replies"][:2]) - m["sent"] for m in complete]
    first = [min(m["replies"]) - m["sent"] for m in moves.values() if m["replies"]]
    split = stage_split(report, data_dir / "pbem.sqlite3",
                        {m["message_id"]: m for m in moves.values()})
    split["stage_seconds"]["delivered_to_stored"] = split["stage_seconds"].pop("submit_to_stored")
    s = summary(both)
    result = {
        "games": count,
        "rate_per_second": args.rate,
        "seconds": args.seconds,
        "moves_sent": len(moves),
        "moves_answered": len(complete),
        "send_span_seconds": round(last_sent - t0, 2),
        "generator": {"starved": starved,
                      "late_p99_ms": round(percentile(late, 99) * 1000, 2),
                      "append_p50_ms": round(percentile(append_seconds, 50) * 1000, 2),
                      "append_p99_ms": round(percentile(append_seconds, 99) * 1000, 2)},
        "latency_seconds": rounded(s),
        "first_reply_latency_seconds": rounded(summary(first)),
        "goal_p50_seconds": GOAL_P50_SECONDS,
        "goal_p99_seconds": GOAL_P99_SECONDS,
        "goal_met": (not timed_out and len(complete) == len(moves) and s["p50"] <= GOAL_P50_SECONDS
                     and s["p99"] <= GOAL_P99_SECONDS),
        "timed_out": timed_out,
        "setup_seconds": round(setup_seconds, 2),
        "driver_cpu_seconds": round(driver_cpu, 3),
        **split,
        "log_problems": daemon.errors_in_log()[:10],
    }
    _imap_logout(appender)
    daemon.stop()
    sink.stop()
    dovecot.close()
    return result


def _imap_logout(client: Any) -> None:
    """Log out politely, but never let a dead connection hide the results or a real error."""
    try:
        client.logout()
    except Exception:
        with contextlib.suppress(Exception):
            client.shutdown()
