#!/usr/bin/env python3
"""CPU per mail of the processor's reading of a move (``read_mail``), in one thread.

The processor's CPU per move (``bench/processor_cpu.py``) moves with the load on the machine by
more than the reading's share of it; this times only the reading: N games are set up in process
(untimed, as ``bench/serve_cpu.py`` does), and the players' move mails, as they arrive, are read
``--rounds`` times; printed is the thread CPU per mail, the median of the rounds. ``--code DIR``
takes pbem from another checkout (A/B on one machine, the same mails).

Usage::

    .venv/bin/python bench/reading_cpu.py [--games 40] [--rounds 7] [--code DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.serve_cpu import SERVER, prepare, use_code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40, help="games, so move mails (40)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds over the mails; median printed (7)")
    parser.add_argument("--repeat", type=int, default=20, help="reads of each mail per round (20)")
    parser.add_argument("--code", metavar="DIR", help="take pbem from this checkout")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pbem-reading-cpu-") as tmp:
        prepared, _replies = prepare(args.games, Path(tmp))
    from pbem.reading.incoming import read_mail

    mails = [(sender, raw) for sender, _rcpts, raw in prepared]
    rounds = []
    for _ in range(args.rounds):
        cpu = time.thread_time()
        for _ in range(args.repeat):
            for sender, raw in mails:
                read_mail(raw, own_addresses=[SERVER], envelope_from=sender)
        rounds.append((time.thread_time() - cpu) * 1e6 / (args.repeat * len(mails)))
    print(f"{len(mails)} move mails: read_mail {statistics.median(rounds):.1f} us per mail (median of "
          f"{args.rounds}; {', '.join(f'{r:.1f}' for r in sorted(rounds))})")
    return 0


if __name__ == "__main__":
    use_code(sys.argv)
    raise SystemExit(main())
