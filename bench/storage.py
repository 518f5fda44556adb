#!/usr/bin/env python3
"""Storage benchmark: what one move and one finished game leave in the database, by table, on SQLite
and on PostgreSQL, measured by playing whole games by mail through one ``pbem serve`` worker.

Capacity planning needs bytes: every mail received is kept raw (``inbound``) and every reply with
its body (``outbound``) until ``pbem admin prune`` (or ``[server] keep_mail_days``) drops the raw
mail of finished messages, and every game's record grows by each move, so the database grows with
every move played. The worker's and PostgreSQL's CPU per move over whole games is printed too
(the capped scale-out bench times first moves only). For each kind of game
(Alien City with the default edition; Space Truckin' with 2 and with 4 players) and each store, the
script starts a fresh database and one worker (``pbem serve``, relaying to an SMTP sink), sets up
``--games`` games by mail (``new`` and ``accept``), and plays them to their end: every player
answers each "Your move" mail as the simulated players of ``bench/harness/players.py`` do (a Reply
with the move suggested, the original quoted below it, as mail clients write replies). The sizes
are read three times: on the empty database, after the set-up and at the end. PostgreSQL:
``pg_total_relation_size`` of each table (heap, indexes and TOAST) after ``VACUUM ANALYZE``, and the
WAL written during play (``pg_current_wal_lsn()`` before and after; PostgreSQL 15 as shipped:
fsync, full-page writes). SQLite: the pages of each table and its indexes from the ``dbstat``
virtual table.

Printed per store and kind: moves per game, bytes per move by table (the growth during play divided
by the moves), bytes per finished game by table (the growth from the empty database, set-up
included, divided by the games), the WAL per move, and the mails sent per move with their mean size
(the ``outbound`` rows and their ``raw`` bytes), beside the mean size of the mails received.

Usage::

    .venv/bin/python bench/storage.py [--games 6] [--kinds alien-city,space-truckin-2,space-truckin-4]
                                      [--stores sqlite,postgresql] [--json] [--keep]
    .venv/bin/python bench/storage.py --check   # exit 1 unless every game ended with nothing lost

Everything listens on 127.0.0.1; every server and temporary directory is removed at the end (unless
``--keep``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness.players import SERVER, answer, raw_bytes, smtp_submit_raw
from bench.harness.report import loadavg, say, workdir
from bench.harness.sink import Arrival, start_sink
from bench.harness.workers import CpuMeter, Worker, postgres_pids, worker_config
from bench.scaling import machine

#: The kinds of game played: name -> (game, seats).
KINDS = {"alien-city": ("alien-city", 2), "space-truckin-2": ("space-truckin", 2),
         "space-truckin-4": ("space-truckin", 4)}
#: The tables reported on their own; every other table is summed as "rest".
GROUPS = ("inbound", "outbound", "games")


# --- sizes ---------------------------------------------------------------------------------------------


def postgres_sizes(dsn: str) -> dict[str, int]:
    """Bytes on disk of every table (heap, indexes, TOAST) after ``VACUUM ANALYZE``, and
    ``"(database)"``: the whole database's."""
    from bench.harness import pgstats

    with contextlib.closing(pgstats.connect(dsn)) as conn:
        conn.execute("VACUUM ANALYZE")
        rows = conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'public' AND c.relkind = 'r'").fetchall()
        total = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    return {**{name: int(size) for name, size in rows}, "(database)": int(total)}


def postgres_wal(dsn: str) -> int:
    """The WAL position now, in bytes (differences are the WAL written in between)."""
    from bench.harness import pgstats

    with contextlib.closing(pgstats.connect(dsn)) as conn:
        return int(conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')").fetchone()[0])


def sqlite_sizes(path: Path) -> dict[str, int]:
    """Bytes of the pages of every table with its indexes (``dbstat``), and ``"(database)"``: every
    page of the file, free ones included (what the WAL holds counts as if checkpointed)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        owner = dict(conn.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')"))
        sizes: dict[str, int] = {}
        for name, size in conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"):
            table = owner.get(name, name)
            sizes[table] = sizes.get(table, 0) + int(size)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()
    return {**sizes, "(database)": int(pages) * int(page_size)}


class Database:
    """One store of one kind's run: where it is, and how its sizes and contents are read."""

    def __init__(self, store: str, work: Path, label: str, postgres: Any) -> None:
        self.store = store
        if store == "sqlite":
            self.path = work / f"{label}.sqlite3"
            self.url = f"sqlite:///{self.path}"
        else:
            self.url = postgres.create_database(label.replace("-", "_"))

    def sizes(self) -> dict[str, int]:
        return sqlite_sizes(self.path) if self.store == "sqlite" else postgres_sizes(self.url)

    def wal(self) -> int | None:
        return postgres_wal(self.url) if self.store == "postgresql" else None

    def query(self, sql: str) -> list[tuple]:
        if self.store == "sqlite":
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            try:
                return conn.execute(sql).fetchall()
            finally:
                conn.close()
        from bench.harness import pgstats

        with contextlib.closing(pgstats.connect(self.url)) as conn:
            return conn.execute(sql).fetchall()

    def mail_counts(self) -> dict[str, int]:
        """Rows and raw bytes of the mail kept: received (``inbound``) and sent (``outbound``)."""
        (inbound, inbound_bytes), = self.query("SELECT COUNT(*), COALESCE(SUM(LENGTH(raw)), 0) FROM inbound")
        (outbound, outbound_bytes), = self.query(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(raw)), 0) FROM outbound")
        return {"inbound": int(inbound), "inbound_bytes": int(inbound_bytes),
                "outbound": int(outbound), "outbound_bytes": int(outbound_bytes)}

    def column_bytes(self) -> dict[str, list[int]]:
        """The live contents of the three big columns: their bytes, and the bytes they take stored
        (PostgreSQL compresses values over about 2 kB; SQLite stores them as they are). Against the
        tables' sizes, what remains is indexes, the other columns, and space held by old versions."""
        stored = "pg_column_size({})" if self.store == "postgresql" else "LENGTH({})"
        out = {}
        for table, column in (("inbound", "raw"), ("outbound", "raw"), ("games", "record")):
            (plain, kept), = self.query(f"SELECT COALESCE(SUM(LENGTH({column})), 0), "
                                        f"COALESCE(SUM({stored.format(column)}), 0) FROM {table}")
            out[f"{table}.{column}"] = [int(plain), int(kept)]
        return out


# --- playing -------------------------------------------------------------------------------------------


def _submit(port: int, messages: list[Any], connections: int) -> None:
    smtp_submit_raw(port, [(m["From"].addresses[0].addr_spec, [m["To"].addresses[0].addr_spec],
                            raw_bytes(m)) for m in messages], connections)


def _is_turn(arrival: Arrival) -> bool:
    return arrival.headline.lower().startswith("your move")


def _is_over(arrival: Arrival) -> bool:
    return arrival.headline.lower().startswith("game over")


def set_up(kind: str, count: int, port: int, sink: Any, connections: int, timeout: float
           ) -> dict[str, Arrival]:
    """Start ``count`` games of ``kind`` by mail, every invitee accepting; by game id, the first
    "Your move" mail."""
    from bench.harness.pbem_api import new_mail, reply_to

    game, seats = KINDS[kind]
    tables = [[f"p{seat}.{i}.{kind}@example.org" for seat in range(seats)] for i in range(count)]
    invitees = {address for table in tables for address in table[1:]}
    start = sink.count()
    _submit(port, [new_mail(t[0], SERVER, f"new {game} with {' '.join(t[1:])}") for t in tables],
            connections)

    def invitations(arrivals: list[Arrival]) -> dict[str, Arrival]:
        return {a.rcpt: a for a in arrivals[start:] if "invites you" in a.headline and a.rcpt in invitees}

    found = invitations(sink.wait_until(lambda a: len(invitations(a)) >= len(invitees), timeout,
                                        "every invitation"))
    _submit(port, [reply_to(a.message, rcpt, "accept") for rcpt, a in sorted(found.items())], connections)
    games = {a.game for a in found.values()}

    def turns(arrivals: list[Arrival]) -> dict[str, Arrival]:
        return {a.game: a for a in arrivals[start:] if a.game in games and _is_turn(a)}  # type: ignore[misc]

    sink.wait_until(lambda a: len(turns(a)) >= len(games), timeout, "every game started")
    sink.wait_quiet(1.0, timeout)
    return turns(sink.since(0))


def play(turns: dict[str, Arrival], port: int, sink: Any, connections: int, timeout: float
         ) -> dict[str, int]:
    """Answer every "Your move" mail, round after round, until every game is over. Returns the moves
    sent and the games that ended."""
    players: dict[str, Any] = {}
    moves = 0
    over: set[str] = set()
    rounds = 0
    while turns:
        base = sink.count()
        sent = {}
        replies = []
        for game, arrival in sorted(turns.items()):
            reply = answer(arrival, players)
            if reply is None:
                raise RuntimeError(f"{game}: no answer to {arrival.headline!r}")
            sent[game] = arrival.ply or 0
            replies.append(reply)
        _submit(port, replies, connections)
        moves += len(replies)
        rounds += 1

        def settled(arrivals: list[Arrival], sent: dict[str, int] = sent, base: int = base) -> bool:
            done = {a.game for a in arrivals[base:]
                    if a.game in sent and (_is_over(a) or (_is_turn(a) and (a.ply or 0) > sent[a.game]))}
            return len(done) == len(sent)

        sink.wait_until(settled, timeout, f"the replies of round {rounds}")
        sink.wait_quiet(0.3, timeout)  # the other players' mails of the same moves
        turns = {}
        for a in sink.since(base):
            if a.game not in sent:
                continue
            if _is_over(a):
                over.add(a.game)
            elif _is_turn(a) and (a.ply or 0) > sent[a.game]:
                turns[a.game] = a  # type: ignore[index]
        for game in over:
            turns.pop(game, None)
        if rounds % 20 == 0:
            say(f"  round {rounds}: {moves} moves, {len(over)} games over")
    return {"moves": moves, "over": len(over), "rounds": rounds}


def run_kind(store: str, kind: str, args: argparse.Namespace, work: Path, postgres: Any,
             cleanup: list[Callable[[], None]]) -> dict[str, Any]:
    """One fresh database and one worker; ``--games`` games of ``kind`` played to their end."""
    from tests.services.requirements import free_port

    label = f"{store}-{kind}"
    db = Database(store, work, label, postgres)
    sink = start_sink()
    cleanup.append(sink.stop)
    port = free_port()
    config = worker_config(work / f"{label}.toml", database=db.url, port=port,
                           relay=(sink.host, sink.port), data_dir=work / label, log_level=args.log_level)
    worker = Worker(label, config)
    cleanup.append(worker.stop)
    worker.wait_listening(port)
    timeout = max(120.0, args.games * 2.0)
    empty = db.sizes()
    say(f"[{label}] setting up {args.games} games by mail ...")
    turns = set_up(kind, args.games, port, sink, args.connections, timeout)
    set_up_sizes = db.sizes()
    set_up_mail = db.mail_counts()
    wal_before = db.wal()
    sent_before = sink.count()
    say(f"[{label}] playing them to their end ...")
    # What the moves of whole games cost (the capped scale-out bench times first moves only): the
    # worker's processes, and PostgreSQL's (the worker's sessions; nothing else asks it meanwhile).
    meter = CpuMeter({"worker": worker.pids,
                      "postgresql": lambda: postgres_pids(postgres) if store == "postgresql" else []})
    meter.start()
    started = time.monotonic()
    played = play(turns, port, sink, args.connections, timeout)
    seconds = time.monotonic() - started
    cpu = meter.stop()
    sink.wait_quiet(1.0, timeout)
    wal_after = db.wal()
    arrived = sink.count() - sent_before
    problems = worker.problems()
    worker.stop()
    end = db.sizes()
    end_mail = db.mail_counts()
    sink.stop()
    columns = db.column_bytes()
    records = db.query("SELECT status, record FROM games")
    entries = [entry for _, record in records for entry in json.loads(record).get("moves", [])]
    statuses = db.query("SELECT status, COUNT(*) FROM inbound GROUP BY status")
    moves, games = played["moves"], args.games
    play_mail = {k: end_mail[k] - set_up_mail[k] for k in end_mail}
    return {
        "store": store, "kind": kind, "games": games, "games_over": played["over"],
        "games_over_in_store": sum(1 for status, _ in records if status == "over"),
        "moves": moves, "moves_recorded": sum(1 for e in entries if "move" in e),
        "record_entries": len(entries), "entry_kinds": sorted({k for e in entries for k in e}),
        "rounds": played["rounds"],
        "seconds": round(seconds, 1), "moves_per_game": round(moves / games, 1),
        "cpu_ms_per_move": {part: round(used * 1000 / moves, 2) for part, used in cpu.items()},
        "sizes": {"empty": empty, "set_up": set_up_sizes, "end": end},
        "wal_bytes": None if wal_before is None else wal_after - wal_before,  # type: ignore[operator]
        "mail": {"set_up": set_up_mail, "end": end_mail, "play": play_mail,
                 "relayed_during_play": arrived},
        "inbound_status": {status: int(n) for status, n in statuses},
        "column_bytes": columns,
        "log_problems": problems[:5],
    }


def ok(row: dict[str, Any]) -> list[str]:
    """What went wrong in one run (nothing: an empty list): every game over, every move received
    once and processed, every reply relayed."""
    wrong = []
    if row["games_over"] != row["games"] or row["games_over_in_store"] != row["games"]:
        wrong.append(f"{row['games_over']} (store: {row['games_over_in_store']}) of {row['games']} "
                     "games over")
    if row["mail"]["play"]["inbound"] != row["moves"] or row["moves_recorded"] != row["moves"]:
        wrong.append(f"{row['moves']} moves sent, {row['mail']['play']['inbound']} received, "
                     f"{row['moves_recorded']} recorded")
    if set(row["inbound_status"]) != {"done"}:
        wrong.append(f"inbound rows by status: {row['inbound_status']}")
    if row["mail"]["play"]["outbound"] != row["mail"]["relayed_during_play"]:
        wrong.append(f"{row['mail']['play']['outbound']} replies queued, "
                     f"{row['mail']['relayed_during_play']} relayed")
    if row["log_problems"]:
        wrong.append("worker log: " + "; ".join(row["log_problems"]))
    return wrong


# --- the run and its report ----------------------------------------------------------------------------


def grouped(sizes: dict[str, int]) -> dict[str, int]:
    """The tables of ``GROUPS`` on their own, every other table summed as "rest", and the total."""
    out = {group: sizes.get(group, 0) for group in GROUPS}
    out["rest"] = sum(v for k, v in sizes.items() if k not in GROUPS and not k.startswith("("))
    out["tables"] = sum(out.values())
    out["database"] = sizes["(database)"]
    return out


def figures(row: dict[str, Any]) -> dict[str, Any]:
    """Per move (the growth during play) and per finished game (the growth from the empty database),
    by table group."""
    empty, set_up, end = (grouped(row["sizes"][k]) for k in ("empty", "set_up", "end"))
    play = row["mail"]["play"]
    moves, games = row["moves"], row["games"]
    return {
        "per_move": {k: round((end[k] - set_up[k]) / moves) for k in end},
        "per_game": {k: round((end[k] - empty[k]) / games) for k in end},
        "wal_per_move": None if row["wal_bytes"] is None else round(row["wal_bytes"] / moves),
        "mails_per_move": round(play["outbound"] / moves, 3),
        "mail_bytes_mean": round(play["outbound_bytes"] / max(play["outbound"], 1)),
        "received_bytes_mean": round(play["inbound_bytes"] / max(play["inbound"], 1)),
        "mail_bytes_per_move": round(play["outbound_bytes"] / moves),
        "setup_mails_per_game": round(row["mail"]["set_up"]["outbound"] / games, 2),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    from tests.services.postgres import Postgres

    signal.signal(signal.SIGTERM, lambda signum, frame: (_ for _ in ()).throw(KeyboardInterrupt()))
    with workdir("pbem-bench-storage-", args.keep) as work:
        cleanup: list[Callable[[], None]] = []
        try:
            postgres = None
            if "postgresql" in args.stores:
                postgres = Postgres(durable=True)
                cleanup.append(postgres.close)
            results: dict[str, Any] = {"machine": machine(postgres), "runs": []}
            if postgres is None:
                results["machine"]["postgresql"] = None
            for store in args.stores:
                for kind in args.kinds:
                    row = run_kind(store, kind, args, work, postgres, cleanup)
                    row["figures"] = figures(row)
                    row["problems"] = ok(row)
                    results["runs"].append(row)
        finally:
            for undo in reversed(cleanup):
                with contextlib.suppress(Exception):
                    undo()
    results["machine"]["loadavg_after"] = loadavg()
    return results


def _kb(value: float) -> str:
    return f"{value / 1024:,.1f}"


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    out = ["## Storage: bytes a move and a finished game leave in the database", "",
           f"{m['date']}, {m['nproc']} x {m['cpu']}, Python {m['python']}, SQLite {m['sqlite']}, "
           f"PostgreSQL {m['postgresql'] or '-'} (fsync and full-page writes on), commit {m['commit']}, "
           f"load {m['loadavg_before']} -> {m['loadavg_after']}.", "",
           "Per move: the growth while the games were played, divided by the moves. Per game: the growth "
           "from the empty database (set-up mail included), divided by the games. kB = 1024 bytes; "
           "PostgreSQL: tables with indexes and TOAST after VACUUM ANALYZE; SQLite: dbstat pages. Every move "
           "rewrites its game's whole record: PostgreSQL keeps the old versions' space in the table for "
           "reuse (VACUUM does not shrink the file), SQLite reuses the pages at once; \"rest\" may shrink "
           "(VACUUM truncating a small table).", "",
           "| store | game | games | moves/game | inbound B/move | outbound B/move | games B/move "
           "| rest B/move | tables B/move | database B/move | WAL B/move | kB/finished game "
           "(inbound, outbound, games, rest) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results["runs"]:
        f = r["figures"]
        pm, pg = f["per_move"], f["per_game"]
        wal = "-" if f["wal_per_move"] is None else f"{f['wal_per_move']:,}"
        out.append(f"| {r['store']} | {r['kind']} | {r['games']} | {r['moves_per_game']} | "
                   f"{pm['inbound']:,} | {pm['outbound']:,} | {pm['games']:,} | {pm['rest']:,} | "
                   f"{pm['tables']:,} | {pm['database']:,} | {wal} | {_kb(pg['tables'])} "
                   f"({_kb(pg['inbound'])}, {_kb(pg['outbound'])}, {_kb(pg['games'])}, {_kb(pg['rest'])}) |")
    out += ["", "| store | game | mails sent/move | mean size sent (B) | sent B/move "
            "| mean size received (B) | set-up mails/game | played in (s) | CPU ms/move: worker; PostgreSQL "
            "| problems |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results["runs"]:
        f = r["figures"]
        out.append(f"| {r['store']} | {r['kind']} | {f['mails_per_move']} | {f['mail_bytes_mean']:,} | "
                   f"{f['mail_bytes_per_move']:,} | {f['received_bytes_mean']:,} | "
                   f"{f['setup_mails_per_game']} | {r['seconds']} | {r['cpu_ms_per_move']['worker']}; "
                   f"{r['cpu_ms_per_move']['postgresql'] if r['store'] == 'postgresql' else '-'} | "
                   f"{'; '.join(r['problems']) or 'none'} |")
    out += ["", "Live contents at the end, kB per finished game, as written (as stored):"]
    for r in results["runs"]:
        out.append(f"- {r['store']} {r['kind']}: " + ", ".join(
            f"{name} {_kb(plain / r['games'])} ({_kb(kept / r['games'])})"
            for name, (plain, kept) in r["column_bytes"].items()))
    out += ["", "Mails received are the simulated players' replies (the move on the first line, the "
            "server's mail quoted below it, no Received/DKIM headers): real clients' mail is larger."]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=6, help="games of each kind on each store (6)")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help=f"kinds of game, comma-separated ({','.join(KINDS)})")
    parser.add_argument("--stores", default="sqlite,postgresql", help="stores (sqlite,postgresql)")
    parser.add_argument("--connections", type=int, default=2, help="parallel SMTP connections (2)")
    parser.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING"),
                        help="the worker's log level (INFO)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (databases, logs)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 unless every game ended and every move was received, recorded and "
                             "answered exactly once")
    args = parser.parse_args(argv)
    args.kinds = [k for k in args.kinds.split(",") if k]
    args.stores = [s for s in args.stores.split(",") if s]
    if args.games < 1 or args.connections < 1:
        parser.error("--games and --connections must be positive")
    if not args.kinds or set(args.kinds) - set(KINDS):
        parser.error(f"--kinds: choose from {', '.join(KINDS)}")
    if not args.stores or set(args.stores) - {"sqlite", "postgresql"}:
        parser.error("--stores: sqlite, postgresql or both")
    try:
        results = run(args)
    except KeyboardInterrupt:
        say("interrupted: servers stopped, temporary files removed")
        return 130
    print(json.dumps(results, indent=2, default=str) if args.json else markdown(results))
    return 0 if not args.check or not any(r["problems"] for r in results["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
