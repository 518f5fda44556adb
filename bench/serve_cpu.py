#!/usr/bin/env python3
"""CPU per mail of the ``pbem serve`` process's own parts: the SMTP listener with its group commit,
and the outbox sender.

``bench/scaling.py`` shows the serve process's CPU over a whole run, to a tenth of a second, on a
machine the load, the sink and the processor share. This script measures only those two parts, in
its own process, with the load and the relay in processes of their own: N Alien City games are set
up in process (untimed), and the first move of every game is played once, to get the players' move
mails and the opponents' "Your move" replies as the processor queues them. Then, each run:

* **intake**: a fresh SQLite store behind a real ``SmtpListener``; the move mails arrive over
  ``--connections`` SMTP sessions from another process; the CPU this process spends until the last
  ``250`` (the listener's loop, its group commit into SQLite);
* **send**: a real ``OutboxSender`` on a fresh store delivers the replies to an SMTP sink in another
  process while they are queued one at a time, ``--rate`` a second, as the processor queues them;
  the CPU of the sender's thread until the sink has them all.

Printed per run and as medians: CPU milliseconds per mail of each part. ``--code DIR`` takes pbem
from another checkout (A/B on one machine, the same mails). For a profile: ``py-spy record --gil
--rate 1000 --format raw -o out.txt -- .venv/bin/python bench/serve_cpu.py --runs 1``.

Usage::

    .venv/bin/python bench/serve_cpu.py [--games 600] [--runs 3] [--connections 4] [--code DIR]
"""

from __future__ import annotations

import argparse
import cProfile
import email.policy
import multiprocessing
import pstats
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SERVER = "pbem@localhost"


def use_code(argv: list[str]) -> None:
    """``--code DIR``: pbem from that checkout (before anything imports it)."""
    if "--code" in argv:
        code = str(Path(argv[argv.index("--code") + 1]).resolve())
        sys.path.insert(0, code)
        for name in [m for m in sys.modules if m == "pbem" or m.startswith("pbem.")]:
            del sys.modules[name]


def _submit(port: int, prepared: list[tuple[str, list[str], bytes]], connections: int) -> None:
    """The load, in a process of its own."""
    from bench.harness.players import smtp_submit_raw

    smtp_submit_raw(port, prepared, connections)


def _sink(expected: int, port: int, ready: Any, done: Any) -> None:
    """The relay, in a process of its own: accepts everything, tells when ``expected`` arrived."""
    from aiosmtpd.controller import Controller

    count = [0]

    class Handler:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
            count[0] += 1
            if count[0] >= expected:
                done.set()
            return "250 OK"

    Controller(Handler(), hostname="127.0.0.1", port=port).start()
    ready.set()
    threading.Event().wait()


def _profile_threads(profiles: list[cProfile.Profile]) -> None:
    """``--profile``: each thread of the listener and the sender runs under a cProfile of its own
    (cProfile sees only the thread that enabled it)."""
    from aiosmtpd.controller import BaseThreadedController

    from pbem.doors.smtp_listener import SmtpListener
    from pbem.outbox.sender import OutboxSender

    def wrap(cls: Any, name: str) -> None:
        method = getattr(cls, name)

        def profiled(*args: Any, **kwargs: Any) -> Any:
            profile = cProfile.Profile(time.thread_time)
            profiles.append(profile)
            return profile.runcall(method, *args, **kwargs)
        setattr(cls, name, profiled)

    wrap(BaseThreadedController, "_run")
    wrap(SmtpListener, "_drain_group")
    wrap(OutboxSender, "run")


def prepare(games: int, work: Path) -> tuple[list[tuple[str, list[str], bytes]], list[Any]]:
    """The move mails (sender, recipients, bytes on the wire) and the replies the processor queued
    for them (outbox rows)."""
    from bench.harness.inprocess import InProcess
    from pbem.cli.mailbox import new_mail, reply_to
    from pbem.clock import ManualClock
    from pbem.config import config_from_dict
    from pbem.processing.processor import Processor
    from pbem.store import open_store
    from tests.server.harness import to
    from tests.server.players import Player, headline

    work.mkdir(parents=True, exist_ok=True)
    config = config_from_dict({"server": {"data_dir": str(work / "setup"), "address": SERVER}})
    store = open_store(str(work / "setup.sqlite3"))
    clock = ManualClock(datetime.now(UTC) - timedelta(days=1))
    processor = Processor(config, store, clock, secret=b"s" * 32)
    inproc = InProcess(store, processor, clock)
    tables = [(f"w{i}@example.org", f"b{i}@example.org") for i in range(games)]
    out = inproc.submit([new_mail(w, SERVER, f"new alien-city with {b} as black") for w, b in tables])
    out = inproc.submit([reply_to(to(out, b)[0], b, "accept") for _w, b in tables])
    moves = [Player(rcpt, seed=i).respond(mail)
             for i, (rcpt, mail) in enumerate(r for r in out if "Your move" in headline(r[1]))]
    prepared = [(m["From"].addresses[0].addr_spec, [m["To"].addresses[0].addr_spec],
                 m.as_bytes(policy=email.policy.SMTP)) for m in moves]
    inproc.store_mail(moves)
    while processor.process_pending(1000):
        pass
    replies = store.due_outbound(clock.now() + timedelta(days=3650), 100_000)
    store.close()
    return prepared, replies


def intake(prepared: list[tuple[str, list[str], bytes]], connections: int, work: Path) -> float:
    """CPU seconds of this process while the listener takes every move mail."""
    from pbem.config import config_from_dict
    from pbem.doors.smtp_listener import SmtpListener
    from pbem.store import open_store

    work.mkdir(parents=True, exist_ok=True)
    config = config_from_dict({"server": {"data_dir": str(work / "intake"), "address": SERVER}})
    store = open_store(str(work / "intake.sqlite3"))
    listener = SmtpListener(config, store, port=0, host="127.0.0.1")
    listener.start()
    try:
        load = multiprocessing.get_context("spawn").Process(
            target=_submit, args=(listener.port, prepared, connections))
        cpu = time.process_time()
        load.start()
        load.join()
        cpu = time.process_time() - cpu
        if load.exitcode != 0:
            raise RuntimeError(f"the load process failed (exit {load.exitcode})")
    finally:
        listener.stop()
    stored = store.inbound_counts()["pending"]
    store.close()
    if stored != len(prepared):
        raise RuntimeError(f"{stored} of {len(prepared)} mails stored")
    return cpu


def send(replies: list[Any], work: Path, pace: float) -> float:
    """CPU seconds of the sender's thread while it delivers every reply to the sink, the replies
    queued one at a time, as the processor queues them."""
    from pbem.config import config_from_dict
    from pbem.outbox.sender import OutboxSender
    from pbem.store import open_store
    from tests.services.requirements import free_port

    work.mkdir(parents=True, exist_ok=True)
    context = multiprocessing.get_context("spawn")
    ready, done, port = context.Event(), context.Event(), free_port()
    sink = context.Process(target=_sink, args=(len(replies), port, ready, done), daemon=True)
    sink.start()
    try:
        if not ready.wait(30):
            raise RuntimeError("the sink did not start")
        config = config_from_dict({"server": {"data_dir": str(work / "send"), "address": SERVER},
                                   "relay": {"host": "127.0.0.1", "port": port,
                                             "security": "none"}})
        store = open_store(str(work / "send.sqlite3"))
        queued = datetime.now(UTC) - timedelta(minutes=1)
        sender = OutboxSender(store, config)
        clock = time.pthread_getcpuclockid(sender.start().ident)  # type: ignore[arg-type]
        cpu = time.clock_gettime(clock)
        for row in replies:  # as the processor queues them: one per move, a move every pace s
            with store.transaction() as tx:
                tx.queue_outbound(message_id=row.message_id, sender=row.sender,
                                  recipients=list(row.recipients), raw=row.raw, now=queued)
            sender.wake()
            time.sleep(pace)
        if not done.wait(120):
            raise RuntimeError("the sink did not get every reply")
        cpu = time.clock_gettime(clock) - cpu
        sender.stop_event.set()
        sender.wake()
        sender.join(30)
        store.close()
    finally:
        sink.kill()
        sink.join()
    return cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=600, help="games, so move mails and replies (600)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each part; medians printed (3)")
    parser.add_argument("--connections", type=int, default=4, help="parallel SMTP sessions (4)")
    parser.add_argument("--rate", type=float, default=500.0,
                        help="replies queued per second in the send part, as a processor would (500)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="print cProfile's top N of the listener's and the sender's threads")
    parser.add_argument("--code", metavar="DIR", help="take pbem from this checkout")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pbem-serve-cpu-") as tmp:
        work = Path(tmp)
        prepared, replies = prepare(args.games, work / "prepare")
        print(f"{len(prepared)} move mails ({sum(len(p[2]) for p in prepared) // len(prepared)} bytes"
              f" each), {len(replies)} replies", flush=True)
        results: dict[str, list[float]] = {"intake": [], "send": []}
        profiles: list[cProfile.Profile] = []
        if args.profile:
            _profile_threads(profiles)
        for run in range(args.runs):
            results["intake"].append(intake(prepared, args.connections, work / f"run{run}") * 1000
                                     / len(prepared))
            results["send"].append(send(replies, work / f"run{run}", 1 / args.rate) * 1000 / len(replies))
            print(f"run {run + 1}: intake {results['intake'][-1]:.3f} ms/mail, "
                  f"send {results['send'][-1]:.3f} ms/mail", flush=True)
        med = {part: statistics.median(values) for part, values in results.items()}
        print(f"median of {args.runs}: intake {med['intake']:.3f} ms/mail, send {med['send']:.3f}"
              f" ms/mail, both {med['intake'] + med['send']:.3f} ms per move")
        if profiles:
            stats = pstats.Stats(profiles[0])
            for profile in profiles[1:]:
                stats.add(profile)
            stats.sort_stats("cumulative").print_stats(args.profile)
            stats.sort_stats("tottime").print_stats(args.profile)
    return 0


if __name__ == "__main__":
    use_code(sys.argv)
    raise SystemExit(main())
