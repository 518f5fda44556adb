"""``bench/storage.py`` on one game of Alien City per store: the game is played to its end by mail,
every move is received, recorded and answered once, and the sizes it reports grow as a store that
keeps every mail must. The figures themselves are the benchmark's business, not asserted here.
About 40 seconds.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

from bench.storage import ok
from tests.services.postgres import INSTALL_HINT, bindir
from tests.services.requirements import require

ROOT = Path(__file__).resolve().parents[2]


def test_one_game_per_store_is_measured_and_checked() -> None:
    require(bindir() is not None, INSTALL_HINT)
    done = subprocess.run([sys.executable, "bench/storage.py", "--games", "1", "--kinds", "alien-city",
                           "--check", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    runs = json.loads(done.stdout)["runs"]
    assert [(r["store"], r["kind"]) for r in runs] == [("sqlite", "alien-city"), ("postgresql", "alien-city")]
    for run in runs:
        figures = run["figures"]
        assert run["problems"] == [], run["problems"]
        assert run["games_over"] == run["games_over_in_store"] == 1
        assert run["moves"] == run["moves_recorded"] == run["mail"]["play"]["inbound"] > 10
        # every mail is kept: each table of mail and the game's record grow with every move
        for table in ("inbound", "outbound", "games"):
            assert figures["per_move"][table] > 0, (run["store"], table, figures)
        assert figures["per_game"]["tables"] > 10 * figures["per_move"]["tables"]
        # the player to move is told of each move; the last one tells both players the result
        assert 1.0 < figures["mails_per_move"] < 1.2
        assert figures["mail_bytes_mean"] > 1000 and figures["received_bytes_mean"] > 100
        assert (figures["wal_per_move"] or 0) > 0 if run["store"] == "postgresql" else \
            figures["wal_per_move"] is None

    # --check reports a game that did not end, and a move recorded without its mail kept
    broken = copy.deepcopy(runs[0])
    broken["games_over"] = 0
    broken["mail"]["play"]["inbound"] -= 1
    found = ok(broken)
    assert len(found) == 2 and "0 (store: 1) of 1 games over" in found[0], found
    assert f"{broken['moves'] - 1} received" in found[1], found
