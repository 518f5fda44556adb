"""Standings: games, wins, losses, draws and an Elo rating per player, separately for each game.

The rating is the standard Elo system (Arpad Elo, as used by FIDE): everyone starts at 1500, and after
a game a player's rating moves by K * (S - E), with K = 32, S the score (1 win, 1/2 draw, 0 loss) and
E = 1 / (1 + 10 ** ((Rb - Ra) / 400)) the expected score against an opponent rated Rb. Games are
applied in the order they finished, with the ratings from before each game.

Games of more than two players (Space Truckin' has 3 to 5) count as pairwise results between every
two players of the game, each pair weighted K / (n - 1), so one game moves a rating about as much as
one two-player game. A winner scores 1 against each non-winner; players who are both winners (a shared
win) or both not winners score 1/2 against each other. With two players this is exactly plain Elo.

For the win/loss/draw columns a game is a draw for everyone when every player is a winner (a drawn
two-player game, or an all-round tie); otherwise each winner has a win (shared or not) and everyone
else a loss. A resignation or a forfeit is a loss for the seat that did not win. Only games with
status "over" count; declined and cancelled games do not, nor do games abandoned by agreement (a
draw agreed by the players counts as a draw).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from engine import get_game
from engine.registry import UnknownGameError
from pbem.archive.search import finished_at
from pbem.clocks.reliability import Reliability
from pbem.i18n import N_, _
from pbem.processing import computer
from pbem.record import replay_record
from pbem.store.base import UNRATED_ENDINGS, GameRow

K = 32.0
INITIAL = 1500.0
FORMULA = ("Elo, K=32, start 1500, expected score 1/(1+10^((Rb-Ra)/400)), in finishing order; "
           "n-player games as pairwise results weighted K/(n-1)")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def expected(rating: float, opponent: float) -> float:
    return 1.0 / (1.0 + 10.0 ** ((opponent - rating) / 400.0))


@dataclass
class Standing:
    player: str
    game: str
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    rating: float = INITIAL

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["rating"] = round(self.rating, 2)
        return data


def winners_of(row: GameRow) -> list[str]:
    """The winning seats as the result names them; a finished game without a result (an import of
    a bare record) is scored by replaying it."""
    result = row.record.get("result")
    if isinstance(result, Mapping) and isinstance(result.get("winners"), list):
        return [str(w) for w in result["winners"]]
    state = replay_record(row.record, get_game(row.game))
    return state.score().winners if state.is_over else []


def finish_key(row: GameRow) -> tuple[datetime, str]:
    when = row.finished_at or finished_at(row.record) or row.updated_at or row.created_at or _EPOCH
    return when, row.id


@dataclass(frozen=True)
class Outcome:
    """What the ratings need of a finished game. Rows become outcomes as they are read, so standings
    over 100 000 games never hold 100 000 records."""

    key: tuple[datetime, str]
    game: str
    seats: tuple[tuple[str, str], ...]  # (seat, address) in seat order
    winners: frozenset[str]


def rated(row: GameRow) -> bool:
    """A finished game that counts: not one the players abandoned by agreement, nor one against
    the computer."""
    result = row.record.get("result")
    return row.status == "over" and computer.rated(row) and not (
        isinstance(result, Mapping) and result.get("reason") in UNRATED_ENDINGS)


def outcome(row: GameRow) -> Outcome:
    return Outcome(finish_key(row), row.game, tuple((s.seat, s.email) for s in row.seats),
                   frozenset(winners_of(row)))


def _play(table: dict[str, Standing], played: Outcome) -> None:
    seats = dict(played.seats)
    players = list(dict.fromkeys(seats.values()))  # one entry per address, in seat order
    if len(players) < 2:
        return
    won = {email for seat, email in seats.items() if seat in played.winners}
    for email in players:
        if email not in table:
            table[email] = Standing(player=email, game=played.game)
    before = {email: table[email].rating for email in players}
    weight = K / (len(players) - 1)
    everyone = won == set(players) or not won  # no winner at all counts as an all-round draw
    for email in players:
        line = table[email]
        line.games += 1
        if everyone:
            line.draws += 1
        elif email in won:
            line.wins += 1
        else:
            line.losses += 1
        change = 0.0
        for other in players:
            if other == email:
                continue
            if (email in won) == (other in won):
                score = 0.5
            else:
                score = 1.0 if email in won else 0.0
            change += weight * (score - expected(before[email], before[other]))
        line.rating = before[email] + change


def compute(rows: Iterable[GameRow], game: str | None = None) -> dict[str, list[Standing]]:
    """Standings by game name, best rating first (ties: more games, then address)."""
    outcomes = [outcome(r) for r in rows if rated(r) and (game is None or r.game == game)]
    tables: dict[str, dict[str, Standing]] = {}
    for played in sorted(outcomes, key=lambda o: o.key):
        _play(tables.setdefault(played.game, {}), played)
    return {name: sorted(table.values(), key=lambda s: (-s.rating, -s.games, s.player))
            for name, table in sorted(tables.items())}


def as_json(standings: Mapping[str, list[Standing]]) -> dict[str, Any]:
    return {"formula": FORMULA,
            "games": {name: [s.as_json() for s in lines] for name, lines in standings.items()}}


# The columns' heads, in the reader's language (the terminal's is English).
HEADS = (N_("PLAYER"), N_("GAMES"), N_("WON"), N_("LOST"), N_("DRAWN"), N_("RATING"), N_("ON TIME"))


def table_text(name: str, lines: list[Standing], reliable: Mapping[str, Reliability] | None = None,
               names: Mapping[str, str] | None = None, width: int | None = None) -> str:
    """One game's standings as a plain-text table for the terminal and mail; with ``reliable``, a
    column of each player's reliability (the share of their finished games, of every game, not
    lost on time); ``names``: how each address is shown (a mail's reader sees "(you)"); ``width``:
    the most columns a line may take (a mail's 78; the terminal shows every name whole)."""
    heads = [_(h) for h in HEADS[:7 if reliable is not None else 6]]
    rows = []
    for rank, s in enumerate(lines, 1):
        row = [str(rank), (names or {}).get(s.player, s.player), str(s.games), str(s.wins), str(s.losses),
               str(s.draws), f"{s.rating:.0f}"]
        if reliable is not None:
            line = reliable.get(s.player)
            row.append(f"{line.percent:.0f} %" if line and line.finished else "-")
        rows.append(row)
    # the names as wide as the longest, at most 32 and what keeps a line within ``width`` (the heads
    # of German or Slovak are longer); there a longer name is cut, marked with "…"
    widths = [max(len(h), 4) for h in heads[1:]]
    most = min(32, width - 4 - sum(w + 1 for w in widths)) if width else 32
    wide = min(most, max([len(heads[0]), *(len(row[1]) for row in rows)]))
    for row in rows:
        if width and len(row[1]) > wide:
            row[1] = row[1][:wide - 1] + "…"
    out = [" ".join([f"{'#':>3}", f"{heads[0]:<{wide}}", *(f"{h:>{w}}" for h, w in zip(heads[1:], widths,
                                                                                       strict=True))])]
    for row in rows:
        out.append(" ".join([f"{row[0]:>3}", f"{row[1]:<{wide}}", *(f"{v:>{w}}" for v, w in zip(
            row[2:], widths, strict=True))]))
    return "\n".join(out)


def title_of(name: str) -> str:
    try:
        return get_game(name).title
    except UnknownGameError:
        return name


__all__ = ["FORMULA", "HEADS", "INITIAL", "K", "Outcome", "Standing", "as_json", "compute", "expected",
           "finish_key", "outcome", "table_text", "title_of", "winners_of"]
