#!/usr/bin/env python3
"""Mail-server benchmark: how fast and how promptly the whole server answers moves sent by mail.

Two measurements, each against a real ``Daemon`` with its SQLite store, in a process of its own
(so the load generator and the SMTP sink do not compete with it for the GIL; they still share the
machine's cores, as an MTA on the same host would):

1. **Throughput through the embedded SMTP listener.** N games are set up by mail (``new`` and
   ``accept``; untimed). Then the first move of every game is submitted as a player's reply, over
   a few parallel SMTP connections that each send many messages, and the clock runs until both
   replies of every move (the mover's confirmation and the opponent's "Your move") reached the
   relay, an SMTP sink. Reported: moves per second, plus where the time went (per-stage latencies
   and CPU seconds per daemon thread). Goal: >= 100 moves/s.
2. **Latency from IMAP delivery to the replies leaving, at a steady rate.** A private Dovecot holds
   the server's mailbox, the daemon watches it with IDLE (SMTP listener off). Moves are APPENDed at
   R per second (one IMAP connection; the timestamp is taken just before each APPEND) for S
   seconds; per move the time until both replies reached the sink is measured. Goals: p50 <= 0.5 s,
   p99 <= 2 s.

Usage::

    .venv/bin/python bench/mail.py [--games N] [--rate R] [--seconds S] [--json]
    .venv/bin/python bench/mail.py --only smtp --profile /tmp/prof   # cProfile per daemon thread
    .venv/bin/python bench/mail.py --only smtp --py-spy /tmp/spy     # py-spy stacks (pip install py-spy)
    .venv/bin/python bench/mail.py --check    # exit status 1 when a goal is missed

Everything listens on 127.0.0.1; every server and temporary directory is removed at the end, also
after an error or Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import datetime as dt
import email
import email.parser
import email.policy
import io
import json
import logging
import math
import multiprocessing
import os
import platform
import pstats
import re
import secrets
import shutil
import signal
import smtplib
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# Run as a script, Python puts bench/ first on the path, where bench/engine.py would shadow the
# engine package: the repository goes first instead, and bench/ not at all.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(REPO))

SERVER = "pbem@localhost"
GAME = "alien-city"
GOAL_MOVES_PER_SECOND = 100.0
GOAL_P50_SECONDS = 0.5
GOAL_P99_SECONDS = 2.0

log = logging.getLogger("bench.mail")


def raw_bytes(message: EmailMessage) -> bytes:
    return message.as_bytes(policy=email.policy.SMTP)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "mean": statistics.fmean(values) if values else math.nan,
            "p50": percentile(values, 50), "p90": percentile(values, 90),
            "p99": percentile(values, 99), "max": max(values) if values else math.nan}


# --- the daemon, in a process of its own ---------------------------------------------------------------

def _thread_cpu() -> dict[str, float]:
    """CPU seconds (user + system) of every thread of this process, by thread name."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    ticks = os.sysconf("SC_CLK_TCK")
    result: dict[str, float] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        cpu = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
        name = names.get(int(task.name)) or "native-" + stat[stat.index("(") + 1:stat.rindex(")")]
        name = re.sub(r"_\d+$", "", name)  # executor workers: pbem-smtp-store_0
        result[name] = result.get(name, 0.0) + cpu
    return result


class _Recorder:
    """Timestamps (time.monotonic, comparable across processes on Linux) of the daemon's stages, and
    optionally one cProfile per thread, switched on only around the wrapped calls."""

    def __init__(self) -> None:
        self.on = False
        self.lock = threading.Lock()
        self.events: dict[str, list[tuple]] = {}
        self.profiles: dict[str, cProfile.Profile] | None = None
        self.cpu_at_mark: dict[str, float] = {}
        self.process_cpu_at_mark = 0.0

    def mark(self, profile: bool) -> None:
        with self.lock:
            self.events = {"accept": [], "process": [], "send": []}
            self.profiles = {} if profile else None
            self.cpu_at_mark = _thread_cpu()
            times = os.times()
            self.process_cpu_at_mark = times.user + times.system
            self.on = True

    def add(self, kind: str, item: tuple) -> None:
        if self.on:
            with self.lock:
                self.events[kind].append(item)

    def wrap(self, kind: str, func: Callable[..., Any], describe: Callable[[Any, tuple], tuple]
             ) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            profile = None
            if self.on and self.profiles is not None:
                name = threading.current_thread().name
                name = re.sub(r"_\d+$", "", name)
                with self.lock:
                    profile = self.profiles.setdefault(name, cProfile.Profile())
            start = time.monotonic()
            if profile is not None:
                profile.enable()
            try:
                result = func(*args, **kwargs)
            finally:
                if profile is not None:
                    profile.disable()
            end = time.monotonic()
            self.add(kind, (start, end, *describe(result, args)))
            return result
        return wrapper

    def report(self, profile_dir: str | None) -> dict[str, Any]:
        with self.lock:
            self.on = False
            cpu = _thread_cpu()
            times = os.times()
            threads = {name: round(seconds - self.cpu_at_mark.get(name, 0.0), 3)
                       for name, seconds in cpu.items()
                       if seconds - self.cpu_at_mark.get(name, 0.0) > 0.0}
            result: dict[str, Any] = {
                "events": self.events,
                "thread_cpu": threads,
                "process_cpu": round(times.user + times.system - self.process_cpu_at_mark, 3),
                "profiles": {},
            }
            if self.profiles and profile_dir:
                Path(profile_dir).mkdir(parents=True, exist_ok=True)
                for name, prof in self.profiles.items():
                    path = Path(profile_dir) / f"{name}.pstats"
                    prof.dump_stats(str(path))
                    text = io.StringIO()
                    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(40)
                    result["profiles"][name] = str(path)
                    (Path(profile_dir) / f"{name}.txt").write_text(text.getvalue())
            return result


def daemon_child(settings: dict[str, Any], conn: Any, log_file: str, log_level: str) -> None:
    """Body of the daemon process: start, answer commands on ``conn``, stop when told or orphaned."""
    logging.basicConfig(level=getattr(logging, log_level), filename=log_file,
                        format="%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s")
    from pbem.config import config_from_dict
    from pbem.daemon import Daemon
    from pbem.server.processor import Processor
    from pbem.store import open_store

    config = config_from_dict(settings)
    config.data_dir.mkdir(parents=True, exist_ok=True)
    store = open_store(config.database_url)
    processor = Processor(config, store)
    rec = _Recorder()
    # Instance attributes shadow the methods; every caller goes through ``self.<name>``.
    processor.process_one = rec.wrap(  # type: ignore[method-assign]
        "process", processor.process_one, lambda result, args: (args[0].id,))
    store.accept_inbound = rec.wrap(  # type: ignore[method-assign]
        "accept", store.accept_inbound, lambda result, args: (result.inbound_id, result.new))
    many = getattr(store, "accept_inbound_many", None)
    if many is not None:  # a group-committing intake, should the store have one
        def accept_many(items: Any, *args: Any, **kwargs: Any) -> Any:
            start = time.monotonic()
            results = many(items, *args, **kwargs)
            end = time.monotonic()
            for result in results:
                rec.add("accept", (start, end, result.inbound_id, result.new))
            return results
        store.accept_inbound_many = accept_many  # type: ignore[attr-defined]
    daemon = Daemon(config, store, processor, processor_process=True)  # as `pbem serve` runs it
    daemon.sender._send_batch = rec.wrap(  # type: ignore[method-assign]
        "send", daemon.sender._send_batch, lambda result, args: tuple(result))
    profile_dir: str | None = None
    try:
        daemon.start()
        conn.send(("ready", daemon.smtp.port if daemon.smtp else None, os.getpid()))
        while True:
            try:
                command, arg = conn.recv()
            except (EOFError, OSError):
                break  # the benchmark went away: stop too
            if command == "mark":
                profile_dir = arg
                rec.mark(profile=arg is not None)
                conn.send(("ok", None))
            elif command == "report":
                conn.send(("ok", rec.report(profile_dir)))
            elif command == "stop":
                break
    except BaseException as exc:  # tell the parent rather than die silently
        with contextlib.suppress(Exception):
            conn.send(("error", f"{type(exc).__name__}: {exc}"))
        raise
    finally:
        daemon.stop()
        store.close()
        with contextlib.suppress(Exception):
            conn.send(("stopped", None))


class DaemonProcess:
    """The parent's handle on ``daemon_child``."""

    def __init__(self, settings: dict[str, Any], log_file: Path, log_level: str) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child_conn = context.Pipe()
        # Not daemonic: the daemon forks its own processor process, as `pbem serve` does. It stops
        # when the benchmark closes the pipe or goes away (EOF in daemon_child).
        self.process = context.Process(target=daemon_child, name="pbem-daemon", daemon=False,
                                       args=(settings, child_conn, str(log_file), log_level))
        self.process.start()
        child_conn.close()
        self.log_file = log_file
        reply = self._recv(60)
        if reply[0] != "ready":
            raise RuntimeError(f"daemon did not start: {reply}")
        self.smtp_port: int | None = reply[1]
        self.pid: int = reply[2]

    def _recv(self, timeout: float) -> tuple:
        if not self._conn.poll(timeout):
            raise RuntimeError(f"daemon process did not answer within {timeout:.0f} s; log tail:\n"
                               + self.log_tail())
        try:
            return self._conn.recv()
        except EOFError:
            raise RuntimeError("daemon process died; log tail:\n" + self.log_tail()) from None

    def call(self, command: str, arg: Any = None, timeout: float = 60) -> Any:
        self._conn.send((command, arg))
        reply = self._recv(timeout)
        if reply[0] != "ok":
            raise RuntimeError(f"daemon: {reply}")
        return reply[1]

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def errors_in_log(self) -> list[str]:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return []
        return [line for line in text.splitlines() if " ERROR " in line or " WARNING " in line]

    def stop(self) -> None:
        if self.process.is_alive():
            with contextlib.suppress(Exception):
                self._conn.send(("stop", None))
            self.process.join(30)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self._conn.close()


# --- the relay: an SMTP sink that notes when each reply arrived -----------------------------------------

@dataclass
class Arrival:
    at: float  # time.monotonic() when the sink had the whole message
    rcpt: str
    subject: str
    game: str | None
    ply: int | None
    data: bytes

    @property
    def message(self) -> EmailMessage:
        return email.message_from_bytes(self.data, policy=email.policy.default)  # type: ignore[return-value]


_HEAD_END = re.compile(rb"\r?\n\r?\n")


def _make_sink_class() -> type:
    from tests.services.smtp_sink import SmtpSink

    class RecordingSink(SmtpSink):
        """``SmtpSink`` that timestamps every message and reads only its header block."""

        def __init__(self) -> None:
            self.arrivals: list[Arrival] = []
            super().__init__()

        def _store(self, message: Any) -> None:
            at = time.monotonic()
            data = message.data
            match = _HEAD_END.search(data)
            head = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(
                data[: match.end()] if match else data)
            ply = head.get("X-Pbem-Ply")
            arrival = Arrival(at=at, rcpt=message.rcpt_tos[0] if message.rcpt_tos else "",
                              subject=" ".join(str(head.get("Subject", "")).split()),
                              game=head.get("X-Pbem-Game"),
                              ply=int(ply) if ply and ply.strip().isdigit() else None, data=data)
            with self._cond:
                self.arrivals.append(arrival)
                self._cond.notify_all()

        def count(self) -> int:
            with self._cond:
                return len(self.arrivals)

        def wait_until(self, predicate: Callable[[list[Arrival]], bool], timeout: float,
                       what: str, stall: float = 20.0) -> list[Arrival]:
            """Until ``predicate(arrivals)``; TimeoutError after ``timeout`` seconds, or sooner when
            nothing arrived for ``stall`` seconds (the server is not going to send more)."""
            started = time.monotonic()
            deadline = started + timeout
            with self._cond:
                while not predicate(self.arrivals):
                    now = time.monotonic()
                    last = self.arrivals[-1].at if self.arrivals else started
                    if now >= deadline or now - max(last, started) >= stall:
                        raise TimeoutError(
                            f"sink: {what} not reached after {now - started:.0f} s "
                            f"({len(self.arrivals)} messages so far, the last "
                            f"{now - max(last, started):.0f} s ago)")
                    self._cond.wait(min(0.5, deadline - now))
                return list(self.arrivals)

        def since(self, index: int) -> list[Arrival]:
            with self._cond:
                return self.arrivals[index:]

        def wait_quiet(self, quiet: float, timeout: float) -> None:
            """Until no message arrived for ``quiet`` seconds (the setup's stragglers are in)."""
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                with self._cond:
                    last = self.arrivals[-1].at if self.arrivals else 0.0
                if time.monotonic() - last >= quiet:
                    return
                time.sleep(0.05)

    return RecordingSink


# --- players -------------------------------------------------------------------------------------------

@dataclass
class Table:
    """One game's two players."""

    index: int
    white: str
    black: str
    game: str | None = None


def make_tables(count: int, tag: str) -> list[Table]:
    return [Table(i, f"w{i}.{tag}@example.org", f"b{i}.{tag}@example.org") for i in range(count)]


def setup_games(tables: list[Table], submit: Callable[[list[EmailMessage]], None], sink: Any,
                timeout: float) -> dict[str, Arrival]:
    """Start every game by mail (``new`` from white, ``accept`` from black) and return, by game id,
    the "Your move" mail that the player to move got."""
    from pbem.mail.client import new_mail, reply_to

    start = sink.count()
    by_black = {t.black: t for t in tables}
    submit([new_mail(t.white, SERVER, f"new {GAME} with {t.black} as black") for t in tables])

    def invitations(arrivals: list[Arrival]) -> dict[str, Arrival]:
        return {a.rcpt: a for a in arrivals[start:]
                if "Invitation to" in a.subject and a.rcpt in by_black}

    sink.wait_until(lambda a: len(invitations(a)) >= len(tables), timeout, "all invitations")
    accepts = []
    for black, arrival in invitations(sink.since(0)).items():
        by_black[black].game = arrival.game
        accepts.append(reply_to(arrival.message, black, "accept"))
    games = {t.game for t in tables}

    def your_moves(arrivals: list[Arrival]) -> dict[str, Arrival]:
        found: dict[str, Arrival] = {}
        for a in arrivals[start:]:
            if a.game in games and a.subject.split("] ", 1)[-1].startswith("Your move"):
                found[a.game] = a  # type: ignore[index]
        return found

    submit(accepts)
    sink.wait_until(lambda a: len(your_moves(a)) >= len(tables), timeout, "every game started")
    sink.wait_quiet(1.0, timeout)
    return your_moves(sink.since(0))


def answer(arrival: Arrival, players: dict[str, Any]) -> EmailMessage | None:
    """The reply the addressee writes to ``arrival`` (a legal move, chosen from the record)."""
    from tests.server.players import Player

    player = players.setdefault(arrival.rcpt, Player(arrival.rcpt, seed=hash(arrival.rcpt) & 0xFFFF))
    return player.respond(arrival.message)


# --- SMTP submission ----------------------------------------------------------------------------------

def smtp_submit(port: int, messages: list[EmailMessage], connections: int) -> None:
    """Send ``messages`` over ``connections`` parallel SMTP sessions (see ``smtp_submit_raw``)."""
    prepared = [(m["From"].addresses[0].addr_spec, [m["To"].addresses[0].addr_spec], raw_bytes(m))
                for m in messages]
    smtp_submit_raw(port, prepared, connections)


def smtp_submit_raw(port: int, prepared: list[tuple[str, list[str], bytes]],
                    connections: int) -> list[tuple[float, float]]:
    """Send ``(sender, recipients, data)`` over ``connections`` parallel SMTP sessions, each sending
    its share (every ``connections``-th message) in order on one connection. Returns per message
    (time.monotonic before MAIL FROM, after the 250 to DATA)."""
    times: list[tuple[float, float]] = [(math.nan, math.nan)] * len(prepared)
    errors: list[BaseException] = []

    def run(first: int) -> None:
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=120) as smtp:
                for index in range(first, len(prepared), connections):
                    sender, rcpts, data = prepared[index]
                    before = time.monotonic()
                    smtp.sendmail(sender, rcpts, data)
                    times[index] = (before, time.monotonic())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,), name=f"bench-smtp-{i}")
               for i in range(min(connections, len(prepared)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError(f"SMTP submission failed: {errors[0]!r}") from errors[0]
    return times


# --- results from the daemon's store --------------------------------------------------------------------

def inbound_message_ids(db: Path) -> dict[int, str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {row[0]: row[1] for row in conn.execute("SELECT id, message_id FROM inbound")}
    finally:
        conn.close()


def normalise_id(value: str) -> str:
    from pbem.store.common import normalise_message_id

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
        "stage_seconds": {k: {s: round(v, 4) if isinstance(v, float) else v
                              for s, v in summary(vals).items()} for k, vals in stages.items()},
        "busy_seconds": {"store_accept": busy("accept"), "process_one": busy("process"),
                         "send_batches": round(sum(e[1] - e[0] for e in sends), 3)},
        "send_batches": {"count": len(sends), "rows": sum(e[3] for e in sends),
                         "mean_rows": round(statistics.fmean([e[3] for e in sends]), 1) if sends else 0},
        "daemon_cpu_seconds": report["process_cpu"],
        "daemon_thread_cpu_seconds": dict(sorted(report["thread_cpu"].items(),
                                                 key=lambda kv: -kv[1])),
        "profiles": report["profiles"],
    }


class PySpy:
    """``py-spy record`` on the daemon process during the timed part (``--py-spy DIR``): collapsed
    stacks per thread, GIL holders only with ``--gil`` left off, so waiting shows too (``--idle``)."""

    def __init__(self, pid: int, out: Path) -> None:
        exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        if not Path(exe).exists():
            raise SystemExit("--py-spy: py-spy not found (.venv/bin/pip install py-spy)")
        out.parent.mkdir(parents=True, exist_ok=True)
        self.out = out
        self.proc = subprocess.Popen([exe, "record", "--pid", str(pid), "--rate", "250", "--threads",
                                      "--idle", "--format", "raw", "--output", str(out), "--nonblocking"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(0.5)  # attached before the load starts

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return str(self.out)


def own_cpu() -> float:
    times = os.times()
    return times.user + times.system


# --- 1. throughput through the SMTP listener ------------------------------------------------------------

def bench_smtp(args: argparse.Namespace, workdir: Path, cleanup: list[Callable[[], None]]) -> dict[str, Any]:
    from tests.services.requirements import free_port

    sink = _make_sink_class()()
    cleanup.append(sink.stop)
    data_dir = workdir / "smtp-data"
    settings = {"server": {"data_dir": str(data_dir), "log_level": args.log_level},
                "smtp": {"enabled": True, "host": "127.0.0.1", "port": free_port()},
                "relay": {"host": sink.host, "port": sink.port, "security": "none"}}
    daemon = DaemonProcess(settings, workdir / "smtp-daemon.log", args.log_level)
    cleanup.append(daemon.stop)
    port = daemon.smtp_port
    assert port

    say(f"[smtp] setting up {args.games} games by mail ...")
    started = time.monotonic()
    tables = make_tables(args.games, "s")
    your_move = setup_games(tables, lambda ms: smtp_submit(port, ms, args.connections), sink,
                            timeout=max(120.0, args.games * 0.5))
    setup_seconds = time.monotonic() - started

    players: dict[str, Any] = {}
    moves: dict[str, dict[str, Any]] = {}
    prepared = []
    for game, arrival in sorted(your_move.items()):
        reply = answer(arrival, players)
        assert reply is not None, arrival.subject
        key = (game, (arrival.ply or 0) + 1)
        moves[normalise_id(reply["Message-ID"])] = {"key": key, "sent": math.nan, "replies": []}
        prepared.append((reply["From"].addresses[0].addr_spec, [reply["To"].addresses[0].addr_spec],
                         raw_bytes(reply)))
    by_key = {m["key"]: m for m in moves.values()}
    say(f"[smtp] setup took {setup_seconds:.1f} s; now {len(prepared)} moves over "
        f"{args.connections} connections ...")

    base = sink.count()

    def all_replied(arrivals: list[Arrival]) -> bool:
        got: dict[tuple, int] = {}
        for a in arrivals[base:]:
            key = (a.game, a.ply)
            if key in by_key:
                got[key] = got.get(key, 0) + 1
        return len(got) == len(by_key) and all(v >= 2 for v in got.values())

    spy = PySpy(daemon.pid, Path(args.py_spy) / "smtp.txt") if args.py_spy else None
    if spy:
        cleanup.append(spy.stop)
    daemon.call("mark", args.profile and str(Path(args.profile) / "smtp"))
    cpu_before = own_cpu()
    t0 = time.monotonic()
    timings = smtp_submit_raw(port, prepared, args.connections)
    submitted = time.monotonic()
    arrivals = sink.wait_until(all_replied, max(120.0, len(prepared) * 0.5), "all replies")
    driver_cpu = own_cpu() - cpu_before
    sink.wait_quiet(0.5, 10.0)  # the sender marks the last rows sent after the sink has them
    report = daemon.call("report", timeout=120)
    if spy:
        report["profiles"]["py-spy"] = spy.stop()

    for move, (before, _after) in zip(moves.values(), timings, strict=True):
        move["sent"] = before
    extra = [a for a in arrivals[base:] if (a.game, a.ply) not in by_key]
    for a in arrivals[base:]:
        move = by_key.get((a.game, a.ply))
        if move is not None:
            move["replies"].append(a.at)
    last_reply = max(max(m["replies"]) for m in moves.values())
    elapsed = last_reply - t0
    split = stage_split(report, data_dir / "pbem.sqlite3", moves)
    accept_ends = sorted(e[1] for e in report["events"]["accept"] if e[3])
    proc_ends = sorted(e[1] for e in report["events"]["process"])
    reply_times = sorted(t for m in moves.values() for t in m["replies"])
    result = {
        "games": len(tables),
        "moves": len(moves),
        "connections": args.connections,
        "setup_seconds": round(setup_seconds, 2),
        "elapsed_seconds": round(elapsed, 3),
        "moves_per_second": round(len(moves) / elapsed, 1),
        "goal_moves_per_second": GOAL_MOVES_PER_SECOND,
        "goal_met": len(moves) / elapsed >= GOAL_MOVES_PER_SECOND,
        "timeline_seconds": {
            "all_submitted_250": round(submitted - t0, 3),
            "last_stored": round(accept_ends[-1] - t0, 3) if accept_ends else None,
            "last_processed": round(proc_ends[-1] - t0, 3) if proc_ends else None,
            "first_reply_at_sink": round(reply_times[0] - t0, 3),
            "last_reply_at_sink": round(reply_times[-1] - t0, 3),
        },
        "submit_250_seconds": {k: round(v, 4) if isinstance(v, float) else v
                               for k, v in summary([b - a for a, b in timings]).items()},
        "unexpected_replies": len(extra),
        "driver_cpu_seconds": round(driver_cpu, 3),
        **split,
        "log_problems": daemon.errors_in_log()[:10],
    }
    daemon.stop()
    sink.stop()
    return result


# --- 2. latency from IMAP delivery to the replies leaving ------------------------------------------------

def bench_imap(args: argparse.Namespace, workdir: Path, cleanup: list[Callable[[], None]]) -> dict[str, Any]:
    from imapclient import IMAPClient

    from tests.services.dovecot import Dovecot

    dovecot = Dovecot()
    cleanup.append(dovecot.close)
    user, password = "pbem", secrets.token_hex(8)
    dovecot.add_user(user, password)
    sink = _make_sink_class()()
    cleanup.append(sink.stop)
    data_dir = workdir / "imap-data"
    settings = {"server": {"data_dir": str(data_dir), "log_level": args.log_level},
                "smtp": {"enabled": False},
                "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                         "username": user, "password": password, "idle": True},
                "relay": {"host": sink.host, "port": sink.port, "security": "none"}}
    daemon = DaemonProcess(settings, workdir / "imap-daemon.log", args.log_level)
    cleanup.append(daemon.stop)

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
                if a.subject.split("] ", 1)[-1].startswith("Your move") and a.game and a.ply:
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

    def all_replied(arrivals: list[Arrival]) -> bool:
        got: dict[tuple, int] = {}
        for a in arrivals[base:]:
            key = (a.game, a.ply)
            if key in moves:
                got[key] = got.get(key, 0) + 1
        return len(got) == len(moves) and all(v >= 2 for v in got.values())

    timed_out = False
    try:
        arrivals = sink.wait_until(all_replied, 30.0, "all replies")
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
        "latency_seconds": {k: round(v, 4) if isinstance(v, float) else v for k, v in s.items()},
        "first_reply_latency_seconds": {k: round(v, 4) if isinstance(v, float) else v
                                        for k, v in summary(first).items()},
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
    try:
        client.logout()
    except Exception:
        with contextlib.suppress(Exception):
            client.shutdown()


# --- report --------------------------------------------------------------------------------------------

def machine() -> dict[str, Any]:
    model = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    dovecot = None
    with contextlib.suppress(Exception):
        from tests.services.dovecot import version

        dovecot = version()
    sqlite = sqlite3.sqlite_version
    return {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "nproc": os.cpu_count(),
            "cpu": model, "python": platform.python_version(), "sqlite": sqlite, "dovecot": dovecot,
            "kernel": platform.release(), "loadavg_before": loadavg(), "commit": commit()}


def commit() -> str:
    """The checkout measured: HEAD, with ``+changes`` when the work tree differs from it."""
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"
    return (head or "?") + ("+changes" if dirty else "")


def loadavg() -> str:
    """1/5/15-minute load averages: other work on the machine skews every number here."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    out = [f"## pbem mail benchmark, {m['date']}", "",
           f"Machine: {m['nproc']} CPUs ({m['cpu']}), Python {m['python']}, SQLite {m['sqlite']}, "
           f"Dovecot {m['dovecot'] or '-'}, Linux {m['kernel']}; checkout {m['commit']}; load average before "
           f"{m['loadavg_before']}, after {m.get('loadavg_after', '?')} (other work on the machine "
           "skews the numbers)", "",
           "| measurement | result | goal | met |", "| --- | --- | --- | --- |"]
    smtp = results.get("smtp")
    if smtp:
        out.append(f"| SMTP listener → replies at relay, {smtp['moves']} moves over "
                   f"{smtp['connections']} connections | **{smtp['moves_per_second']} moves/s** "
                   f"({smtp['elapsed_seconds']} s) | ≥ {GOAL_MOVES_PER_SECOND:g} moves/s | "
                   f"{'yes' if smtp['goal_met'] else 'NO'} |")
    imap = results.get("imap")
    if imap:
        lat = imap["latency_seconds"]
        out.append(f"| IMAP delivery → both replies at relay, {imap['rate_per_second']:g} moves/s for "
                   f"{imap['seconds']:g} s ({imap['moves_answered']}/{imap['moves_sent']} answered) | "
                   f"p50 {lat['p50']:.3f} s, p90 {lat['p90']:.3f} s, p99 {lat['p99']:.3f} s, "
                   f"max {lat['max']:.3f} s | p50 ≤ {GOAL_P50_SECONDS:g} s, p99 ≤ {GOAL_P99_SECONDS:g} s "
                   f"| {'yes' if imap['goal_met'] else 'NO'} |")
    for name, part in (("SMTP throughput", smtp), ("IMAP latency", imap)):
        if not part:
            continue
        out += ["", f"### {name}: where the time went", "",
                "| stage (per move) | mean | p50 | p90 | p99 | max |",
                "| --- | --- | --- | --- | --- | --- |"]
        for stage, st in part["stage_seconds"].items():
            if any(math.isnan(st[k]) for k in ("mean", "max")):
                # stages timed inside the processor, which runs in the daemon's own child process
                out.append(f"| {stage} | (not measured: the processor runs in a child process) "
                           "| | | | |")
                continue
            out.append(f"| {stage} | " + " | ".join(f"{st[k]:.4f}" for k in ("mean", "p50", "p90", "p99",
                                                                               "max")) + " |")
        out.append("")
        out.append("Daemon CPU below is the parent process (doors, sender, scheduler); the processor "
                   "process is not included.")
        cpu = part["daemon_thread_cpu_seconds"]
        moves = part.get("moves") or part.get("moves_sent") or 1
        out += ["", f"Daemon CPU {part['daemon_cpu_seconds']:.2f} s "
                f"({part['daemon_cpu_seconds'] / moves * 1000:.1f} ms per move); by thread: "
                + ", ".join(f"{k} {v:.2f} s" for k, v in cpu.items()) + ".",
                "Busy (wall) seconds: " + ", ".join(f"{k} {v}" for k, v in part["busy_seconds"].items())
                + f"; send batches {part['send_batches']}; benchmark process CPU "
                f"{part['driver_cpu_seconds']:.2f} s."]
        if part.get("timeline_seconds"):
            out.append("Timeline from the first submission (s): " + ", ".join(
                f"{k} {v}" for k, v in part["timeline_seconds"].items()) + ".")
        if part.get("generator"):
            out.append(f"Generator: {part['generator']}.")
        if part.get("log_problems"):
            out.append(f"Daemon log warnings/errors (first {len(part['log_problems'])}): "
                       + "; ".join(part["log_problems"]))
    return "\n".join(out) + "\n"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=300, help="games for the SMTP run (default 300); "
                        "also the most games the IMAP run sets up")
    parser.add_argument("--rate", type=float, default=10.0, help="IMAP run: moves per second (10)")
    parser.add_argument("--seconds", type=float, default=30.0, help="IMAP run: seconds of load (30)")
    parser.add_argument("--imap-games", type=int, default=0,
                        help="IMAP run: games to set up (default: min(--games, rate*seconds)); fewer "
                             "games than moves means games continue with further moves")
    parser.add_argument("--connections", type=int, default=4, help="parallel SMTP connections (4)")
    parser.add_argument("--only", choices=("smtp", "imap"), help="run one of the two measurements")
    parser.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"),
                        help="the daemon's log level (INFO, as pbem serve runs by default); the log "
                             "goes to a file in the temporary directory")
    parser.add_argument("--profile", metavar="DIR",
                        help="cProfile each daemon thread during the timed part; .pstats and .txt to DIR")
    parser.add_argument("--py-spy", metavar="DIR",
                        help="sample the daemon with py-spy (needs it in the venv) during the timed "
                             "part; collapsed stacks per thread to DIR/smtp.txt and DIR/imap.txt")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, db)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a goal is missed")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.games < 1 or args.rate <= 0 or args.seconds <= 0 or args.connections < 1:
        parser.error("--games, --rate, --seconds and --connections must be positive")

    # SIGTERM ends the run like Ctrl-C: through the finally below, which cleans up.
    signal.signal(signal.SIGTERM, lambda signum, frame: (_ for _ in ()).throw(KeyboardInterrupt()))
    workdir = Path(tempfile.mkdtemp(prefix="pbem-bench-mail-"))
    cleanup: list[Callable[[], None]] = []
    results: dict[str, Any] = {"machine": machine()}
    try:
        if args.only in (None, "smtp"):
            results["smtp"] = bench_smtp(args, workdir, cleanup)
        if args.only in (None, "imap"):
            results["imap"] = bench_imap(args, workdir, cleanup)
    except KeyboardInterrupt:
        say("interrupted: servers stopped, temporary files removed")
        return 130
    except BaseException:
        for log_file in sorted(workdir.glob("*-daemon.log")):
            problems = [line for line in log_file.read_text(errors="replace").splitlines()
                        if " ERROR " in line or " WARNING " in line or line.startswith(("Trace", "  "))]
            if problems:
                say(f"--- {log_file.name}: warnings and errors (last 30 lines) ---")
                say("\n".join(problems[-30:]))
        raise
    finally:
        for undo in reversed(cleanup):
            with contextlib.suppress(Exception):
                undo()
        if args.keep:
            say(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    results["machine"]["loadavg_after"] = loadavg()
    if args.json:
        print(json.dumps(results, indent=2, default=str))
    else:
        print(markdown(results))
    met = all(part["goal_met"] for key, part in results.items() if key != "machine")
    return 0 if met or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
