"""What a board costs in a mail: bytes of the HTML board and of the text board with its legal list,
and the widest line of every text a renderer writes, over random games of each game, edition and
player count.

    .venv/bin/python bench/boards.py [GAMES]

Goals (issue 10): an Alien City HTML board at most 5 KB, a Space Truckin' one at most 8 KB, so a
whole 2-player Alien City game (about 22 mails with board and listing per player) stays under
300 KB per player; no line over 78 columns.
"""

from __future__ import annotations

import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.base import State, random_positions
from engine.registry import get_game

GOAL_HTML = {"alien-city": 5_000, "space-truckin": 8_000}
CASES = [("alien-city", {}, 2), ("alien-city", {"edition": "1.2", "symmetric": True}, 2),
         *(("space-truckin", {}, n) for n in range(2, 6))]


def widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def main(games: int = 10) -> int:
    failed = False
    widths: dict[str, int] = {}
    for name, options, n_players in CASES:
        game = get_game(name)
        html, mail = [], []
        for seed in range(games):
            state: State
            for state in random_positions(game, options, n_players, random.Random(seed)):
                viewer = state.to_move
                board = state.render_html(viewer)
                html.append(len(board.encode()))
                text, legal, score = state.render(viewer), state.render_legal(viewer), state.score().text
                mail.append(len((text + legal).encode()) + len(board.encode()))
                for what, out in (("text", text), ("legal", legal), ("score", score)):
                    widths[f"{name} {what}"] = max(widths.get(f"{name} {what}", 0), widest(out))
        over = max(html) > GOAL_HTML[name]
        failed |= over
        print(f"{name:<14} {n_players}p {options or ''}: {len(html)} positions; HTML board "
              f"mean {statistics.mean(html):,.0f} B, max {max(html):,} B (goal {GOAL_HTML[name]:,})"
              f"{'  OVER' if over else ''}; text+legal+HTML mean {statistics.mean(mail):,.0f} B")
    for name in ("alien-city", "space-truckin"):
        for topic, text in get_game(name).help_topics().items():
            widths[f"{name} help {topic}"] = widest(text)
    print("\nWidest line:")
    for key, width in sorted(widths.items()):
        flag = "  OVER 78" if width > 78 else ""
        failed |= width > 78
        print(f"  {key:<30} {width}{flag}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
