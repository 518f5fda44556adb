"""How much mail a player gets for one whole game: mails and bytes per player, by notification level.

    .venv/bin/python bench/mail_volume.py [--games N] [--seed S]

Whole games are played through the real reader, processor and store (in process, no network: the
size of a mail does not depend on how it travels), by players who tap a random legal move's link or
press Reply and type it. Every mail is counted with its full size as it would go on the wire.

Goal (issue 10): a two-player Alien City game with default settings (notify turn, mail html) sends
each player at most 25 mails and 300 KB in all. The other rows show what the other choices cost:
``mail tap`` adds a one-tap link for every legal move, ``notify every`` a mail after every move.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness.report import commit, loadavg
from pbem.cli.mailbox import reply_to
from tests.server.harness import Server, headline
from tests.server.players import Player, parse

GOAL_MAILS, GOAL_BYTES = 25, 300_000


def play(game: str, players: list[str], notify: str, mail: str, seed: int) -> dict[str, tuple[int, int]]:
    """One whole game; returns (mails, bytes) per player, the answers to ``set`` left out."""
    with tempfile.TemporaryDirectory(prefix="pbem-volume-") as folder:
        server = Server(Path(folder))
        try:
            rng = random.Random(seed)
            people = {p: Player(p, rng.randrange(2**32)) for p in players}
            queue = server.submit(server.mail(players[0], f"new {game} with {' '.join(players[1:])}"))
            choices = [f"set {key} {value}" for key, value, default in
                       (("notify", notify, "turn"), ("mail", mail, "html")) if value != default]
            if choices:
                for address in players:  # a reply to the first mail each one gets sets them
                    first = next(m for rcpt, m in queue if rcpt == address)
                    server.submit(reply_to(first, address, "\n".join(choices)))
            totals = {p: (0, 0) for p in players}
            while queue:
                rcpt, message = queue.pop(0)
                reply = people[rcpt].respond(message)
                if reply is not None:
                    queue += server.submit(reply)
            for rcpt, raw in server.sent:
                if rcpt in totals and not headline(parse(raw)).startswith(("Done: ", "Confirm: ")):
                    mails, size = totals[rcpt]
                    totals[rcpt] = (mails + 1, size + len(raw))
            return totals
        finally:
            server.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10, help="games per row (default 10)")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the players' choices")
    args = parser.parse_args(argv)
    rows = [("alien-city", 2, "turn", "html"), ("alien-city", 2, "turn", "tap"),
            ("alien-city", 2, "turn", "text"), ("alien-city", 2, "every", "html"),
            ("space-truckin", 3, "turn", "html"), ("space-truckin", 3, "turn", "tap"),
            ("space-truckin", 3, "every", "html")]
    print(f"Commit {commit()}, load {loadavg()}; {args.games} games per row, seed {args.seed}\n")
    print("| game | players | notify | mail | mails per player: mean (max) | KB per player: mean (max) "
          "| goal |")
    print("|---|---|---|---|---|---|---|")
    missed = False
    for game, n, notify, mail in rows:
        mails, sizes = [], []
        for number in range(args.games):
            players = [f"p{i}@example.org" for i in range(n)]
            for count, size in play(game, players, notify, mail, args.seed * 1000 + number).values():
                mails.append(count)
                sizes.append(size / 1000)
        goal = ""
        if game == "alien-city" and notify == "turn" and mail == "html":
            ok = max(mails) <= GOAL_MAILS and max(sizes) * 1000 <= GOAL_BYTES
            missed |= not ok
            goal = f"<= {GOAL_MAILS} mails, <= {GOAL_BYTES // 1000} KB: {'yes' if ok else 'NO'}"
        print(f"| {game} | {n} | {notify} | {mail} | {statistics.mean(mails):.1f} ({max(mails)}) | "
              f"{statistics.mean(sizes):.0f} ({max(sizes):.0f}) | {goal} |")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
