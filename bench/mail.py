#!/usr/bin/env python3
"""Mail-server benchmark: how fast and how promptly the whole server answers moves sent by mail.

Two measurements, each against a real ``Daemon`` with its SQLite store, in a process of its own
(so the load generator and the SMTP sink do not compete with it for the GIL; they still share the
machine's cores, as an MTA on the same host would). Each is a module of its own, ``bench/mail_smtp.py``
and ``bench/mail_imap.py``, on the harness in ``bench/harness/``; this script runs them:

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
import sys
from collections.abc import Iterable
from pathlib import Path

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import mail_imap, mail_smtp
from bench.harness import mailrun


def main(argv: Iterable[str] | None = None) -> int:
    """The options of both scenarios on one command line, so ``make bench`` runs them together."""
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
    mailrun.add_common_arguments(parser)
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.games < 1 or args.rate <= 0 or args.seconds <= 0 or args.connections < 1:
        parser.error("--games, --rate, --seconds and --connections must be positive")
    return mailrun.run(args, (mail_smtp, mail_imap))


if __name__ == "__main__":
    sys.exit(main())
