#!/usr/bin/env python3
"""Move -> reply through a real Postfix, door by door (issue 22): how long a player waits.

For each door, pbem is installed by ``deploy/install.sh`` into temporary folders (a real service
user, the venv it makes) and a private Postfix (and Dovecot) is set up from the files install.sh
wrote, exactly as the deploy tests do it (tests/deploy/installed.py); ``pbem serve`` runs as the
service user. Two players then play Alien City by mail, game after game, until N moves were made:
each move is submitted to Postfix over SMTP, and its time is from just before that submission until
the mail telling the opponent to move (or that the game is over) was written into the opponent's
Maildir (the file's time). Doors:

* ``pipe``: Postfix's pipe service runs ``pbem deliver`` as the service user (deploy/pipe/);
* ``dovecot``: Postfix -> Dovecot LMTP, ``pbem serve`` on IMAP IDLE (deploy/dovecot/).

Usage (as root: it creates the user ``pbemdeploy`` and runs Postfix)::

    .venv/bin/python bench/pipe_latency.py [--moves 40] [--only pipe|dovecot] [--json]

Everything listens on 127.0.0.1; servers and temporary folders are removed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness.mailrun import machine
from bench.harness.pbem_api import new_mail
from bench.harness.report import loadavg, percentile, say
from tests.deploy.installed import (
    ADDRESS,
    Installation,
    Serve,
    build_wheel,
    dovecot_mail_system,
    pipe_mail_system,
    run_install,
    submitter,
)
from tests.server.players import Player, headline
from tests.services import postfix as postfix_service
from tests.services.postfix import Postfix

DOORS = {"pipe": "Postfix pipe -> pbem deliver", "dovecot": "Postfix -> Dovecot LMTP -> IMAP IDLE"}


@contextlib.contextmanager
def mail_system(door: str, inst: Installation) -> Iterator[Postfix]:
    if door == "pipe":
        with pipe_mail_system(inst) as postfix:
            yield postfix
    else:
        with dovecot_mail_system(inst) as (postfix, _dovecot):
            yield postfix


def play(postfix: Postfix, moves: int, timeout: float = 120) -> list[float]:
    """Seconds from each move's submission to the opponent's next mail, for ``moves`` moves."""
    alice, bob = postfix.address("alice"), postfix.address("bob")
    players = {alice: Player(alice, 1), bob: Player(bob, 2)}
    submit = submitter(postfix.port)
    feed = postfix.arrivals(["alice", "bob"])
    submit(new_mail(alice, ADDRESS, f"new alien-city with {bob} as black"))
    latencies: list[float] = []
    waiting: tuple[float, str] | None = None  # (sent at, the opponent) of the move in flight
    over: set[str] = set()
    seen = 0
    while len(latencies) < moves:
        received = feed.wait_for(seen + 1, timeout=timeout)
        for item in received[seen:]:
            rcpt, message = item.rcpt_tos[0], item.message
            first = headline(message)
            told = "our move" in first or first.startswith("Game over")
            if waiting is not None and rcpt == waiting[1] and told:
                latencies.append(item.received_at - waiting[0])
                waiting = None
                say(f"  move {len(latencies)}: {latencies[-1]:.3f} s")
            if first.startswith("Game over"):
                over.add(rcpt)
                if over == set(players):  # both told: the next game
                    over.clear()
                    submit(new_mail(alice, ADDRESS, f"new alien-city with {bob} as black"))
                continue
            reply = players[rcpt].respond(message)
            if reply is None:
                continue
            if "our move" in first:
                waiting = (time.monotonic(), bob if rcpt == alice else alice)
            submit(reply)
        seen = len(received)
    return latencies[:moves]


def measure(door: str, wheel: Path, moves: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix=f"pbem-bench-{door}-", dir="/tmp"))
    root.chmod(0o755)
    try:
        result = run_install(root, door, source=wheel)
        if result.returncode != 0:
            raise SystemExit(f"install.sh failed:\n{result.stdout}\n{result.stderr}")
        inst = Installation.of(root, door, result.stdout)
        python = subprocess.run([str(inst.prefix / "venv" / "bin" / "python"), "-c",
                                 "import platform; print(platform.python_version())"],
                                capture_output=True, text=True, check=True).stdout.strip()
        with mail_system(door, inst) as postfix:
            server = Serve(inst)
            try:
                say(f"{DOORS[door]}: {moves} moves")
                latencies = play(postfix, moves)
            finally:
                server.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"door": DOORS[door], "moves": len(latencies), "server_python": python,
            "median": percentile(latencies, 50), "p10": percentile(latencies, 10),
            "p90": percentile(latencies, 90), "min": min(latencies), "max": max(latencies),
            "latencies": [round(x, 4) for x in latencies]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=40, help="moves per door (default: %(default)s)")
    parser.add_argument("--only", choices=sorted(DOORS), help="measure one door")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        parser.error("run as root: it installs for a system user and starts Postfix")
    results: dict[str, Any] = {"machine": {**machine(), "postfix": postfix_service.version()}}
    with tempfile.TemporaryDirectory(prefix="pbem-bench-wheel-") as folder:
        wheel = build_wheel(Path(folder))
        for door in DOORS:
            if args.only in (None, door):
                results[door] = measure(door, wheel, args.moves)
    results["machine"]["loadavg_after"] = loadavg()
    if args.json:
        print(json.dumps(results, indent=2, default=str))
        return 0
    m = results["machine"]
    pythons = sorted({results[door]["server_python"] for door in DOORS if door in results})
    print(f"Move -> reply through real Postfix (bench/pipe_latency.py), {m['date']}: {m['nproc']} cores "
          f"({m['cpu']}), server on Python {', '.join(pythons)} (the venv install.sh made), "
          f"Postfix {m['postfix']}, Dovecot {m['dovecot']}, "
          f"load {m['loadavg_before']} -> {m['loadavg_after']}, checkout {m['commit']}")
    print()
    print("| door | moves | median | p10 | p90 | min | max |")
    print("|---|---|---|---|---|---|---|")
    for door in DOORS:
        if door in results:
            r = results[door]
            print(f"| {r['door']} | {r['moves']} | {r['median']:.3f} s | {r['p10']:.3f} s | "
                  f"{r['p90']:.3f} s | {r['min']:.3f} s | {r['max']:.3f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
