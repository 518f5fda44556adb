"""Running a tournament: starting it, pairing rounds, creating their games, taking in results and
ending it, always inside the transaction of whatever caused it (a player's mail, a moderator's,
the scheduler's run), on the tournament row locked for that transaction.

So a round is paired, its games created and their mails queued together, exactly once: a crash
before the commit leaves none of it, after the commit the round's number in the document stops a
second pairing. ``advance`` is the one entry: it takes in the results of finished games and does
whatever is due (the next round, the next matches, the end); calling it again changes nothing.

Games are ordinary games: they start at once (no invitation), every seat accepted, with the
tournament's options and time control, and their record names the tournament. Each player gets
one mail per round: with one new game, that game's first mail (its board and legal moves for the
player who moves first); with several, one mail listing them all; with a bye, a note.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from engine import EngineError, State, get_game
from pbem import failpoints
from pbem.community import deadlines as dl
from pbem.community.archive_commands import finished_games
from pbem.community.standings import compute
from pbem.i18n import N_, _, ngettext
from pbem.outbox.compose import Action, ActionGroup, Section, subject_phrase
from pbem.processing import hooks
from pbem.processing.context import EVENT, TURN, MailContext, PlannedMail
from pbem.processing.gamemail import board_section, game_names, players_line, who
from pbem.processing.games import announce_end, announce_position, save_game
from pbem.processing.invitations import activate, create_game
from pbem.record import iso
from pbem.store.base import GameRow
from pbem.store.tournaments import TournamentRow
from pbem.tournaments import document as d
from pbem.tournaments import elimination, ladder, league, roundrobin, swiss
from pbem.tournaments.model import place_points, places_from_totals
from pbem.tournaments.names import name_of, read_by, title
from pbem.tournaments.seating import SeatingError, table_sizes
from pbem.tournaments.tables import bracket_results, division_table, ranking
from pbem.tournaments.texts import reach_text, table_sections

log = logging.getLogger("pbem.tournaments")


_held = threading.local()
#: game id -> what the engine said when the game started (the first tile drawn), until the round's
#: mails have said it; kept out of the record, which holds only what replays
_START_NOTES: dict[str, list[str]] = {}


@contextmanager
def holding() -> Iterator[set[str]]:
    """Around a command or a scheduler step: the tournaments it has loaded to change (and will save)
    are held, so that a game it ends does not make the game-end hook load and change them again
    from the store behind its back; it advances them itself."""
    outer = getattr(_held, "ids", None)
    _held.ids = set() if outer is None else outer
    try:
        yield _held.ids
    finally:
        if outer is None:
            _held.ids = None


def hold(tournament_id: str) -> None:
    ids = getattr(_held, "ids", None)
    if ids is not None:
        ids.add(tournament_id)


def held(tournament_id: str) -> bool:
    return tournament_id in (getattr(_held, "ids", None) or ())


# --- results of games -----------------------------------------------------------------------------

def points_of(row: GameRow, players: list[str]) -> tuple[float, ...]:
    """The points of a finished game for ``players`` (addresses, seat order), by place."""
    result = row.record.get("result") or {}
    by_email = {s.email: s.seat for s in row.seats}
    seats = [by_email.get(p, "") for p in players]
    winners = set(result.get("winners") or [])
    ranking = result.get("ranking")
    if isinstance(ranking, list) and ranking:
        totals = result.get("totals") or {}
        order = {seat: i for i, seat in enumerate(ranking)}
        places = []
        for seat in seats:
            place = 1 + sum(1 for other in seats if order.get(other, 99) < order.get(seat, 99)
                            and not (totals.get(other) == totals.get(seat) and other in winners
                                     and seat in winners))
            places.append(place)
        return tuple(place_points(places))
    totals = result.get("totals") or {}
    if not winners:
        return tuple(place_points([1] * len(seats)))
    return tuple(place_points(places_from_totals([float(totals.get(s, 0)) for s in seats],
                                                  [s in winners for s in seats])))


def collect(ctx: MailContext, trow: TournamentRow) -> list[dict[str, Any]]:
    """Take in the points of every game of the tournament that has ended; the items updated."""
    updated = []
    for item in d.running_games(trow.doc):
        row = ctx.touched[item["id"]][0] if item["id"] in ctx.touched else ctx.tx.get_game(item["id"])
        if row is None or row.status not in ("over", "cancelled", "declined"):
            continue
        if row.status != "over":
            item["points"] = [0.0] * len(item["players"])
            item["played"] = False
        else:
            item["points"] = list(points_of(row, list(item["players"])))
        if "open" in item:
            item["open"] = False
            item["ended_at"] = iso(row.finished_at or ctx.now)
        updated.append(item)
    return updated


# --- starting -------------------------------------------------------------------------------------

def ratings_now(ctx: MailContext, game: str, emails: list[str]) -> dict[str, float]:
    table = {line.player: line.rating for line in compute(finished_games(ctx, game), game).get(game, [])}
    return {e: round(table.get(e, 1500.0), 1) for e in emails}


def start(ctx: MailContext, trow: TournamentRow) -> None:
    """Entry closes: the tournament starts with those who entered, or is cancelled when too few
    did. Seeds are the ratings now (higher first, then the order of entry)."""
    doc = trow.doc
    settings = d.settings_from_json(doc["settings"])
    playing = d.entrants(doc, "entered")
    if len(playing) < settings.min:
        cancel(ctx, trow, ngettext("only {n} player entered; it needs at least {min}.",
                                   "only {n} players entered; it needs at least {min}.", len(playing)),
               n=len(playing), min=settings.min)
        return
    largest = get_game(trow.game).max_players
    if settings.tables > 2:
        try:
            table_sizes(len(playing), settings.tables, 3, largest)
        except SeatingError:
            cancel(ctx, trow, N_("{n} players cannot sit at tables of 3 to {max}."), n=len(playing),
                   max=largest)
            return
    rated = ratings_now(ctx, trow.game, playing)
    for entry in doc["entrants"]:
        if entry["email"] in rated:
            entry["rating"] = rated[entry["email"]]
    seeds = sorted(playing, key=lambda p: (-rated[p], playing.index(p)))
    doc["seeds"] = seeds
    trow.status = "running"
    doc["started_at"] = iso(ctx.now)
    fmt = trow.format
    if fmt == "round-robin":
        doc["schedule"] = [[list(g) for g in r] for r in roundrobin.schedule(
            seeds, double=settings.double, table=settings.tables, largest=largest)]
        if settings.together:
            doc["schedule"] = [[g for r in doc["schedule"] for g in r]]
    elif fmt in ("elimination", "double-elimination"):
        doc["bracket"] = elimination.bracket_json(elimination.build(seeds, fmt == "double-elimination"))
        doc["matches"] = {}
    elif fmt == "ladder":
        doc["ladder"] = seeds
        doc["challenges"] = []
    elif fmt == "league":
        doc["season"] = 1
        _start_season(doc, league.split(seeds, settings.division), settings)
    ctx.outcomes.append(f"tournament {trow.id} started")
    if fmt == "ladder":
        for email in playing:
            _tell(ctx, trow, email, lambda e: _("{title} has started: you are number {n} of {count} on "
                                                "the ladder").format(title=title(trow),
                                                                     n=doc["ladder"].index(e) + 1,
                                                                    count=len(doc["ladder"])),
                  lambda e: [reach_text(trow, doc["ladder"].index(e) + 1)])
        trow.due_at = None
        return
    advance(ctx, trow)


def _start_season(doc: dict[str, Any], divisions: list[list[str]], settings: d.Settings) -> None:
    doc["divisions"] = divisions
    doc["schedule"] = [[[list(g) for g in r] for r in roundrobin.schedule(div, double=settings.double)]
                       for div in divisions]
    doc["rounds"] = []


def cancel(ctx: MailContext, trow: TournamentRow, reason: str, **values: Any) -> None:
    trow.status = "cancelled"
    trow.finished_at = ctx.now
    trow.due_at = None
    trow.doc["result"] = {"reason": "cancelled", "at": iso(ctx.now)}
    ctx.outcomes.append(f"tournament {trow.id} cancelled")
    for email in {*d.entrants(trow.doc, "entered"), trow.organizer}:
        _tell(ctx, trow, email, lambda e: _("{title} is cancelled").format(title=title(trow)),
              lambda e: [_("It is cancelled: {reason}").format(reason=_(reason).format(**values))])


# --- advancing ----------------------------------------------------------------------------------

def advance(ctx: MailContext, trow: TournamentRow) -> None:
    """Take in results; pair what is due; end the tournament when it is over."""
    ended = collect(ctx, trow)
    if trow.status != "running":
        return
    fmt = trow.format
    if fmt == "ladder":
        for item in ended:
            _ladder_result(ctx, trow, item)
        return
    if fmt in ("elimination", "double-elimination"):
        _advance_bracket(ctx, trow)
        return
    rounds = trow.doc.setdefault("rounds", [])
    if rounds and any(item.get("points") is None for item in rounds[-1]["games"]):
        return
    if fmt == "league":
        _advance_league(ctx, trow)
        return
    settings = d.settings_from_json(trow.doc["settings"])
    total = settings.rounds if fmt == "swiss" else len(trow.doc["schedule"])
    if len(rounds) >= (total or 0) or (fmt == "swiss" and _swiss_exhausted(trow)):
        finish(ctx, trow)
        return
    if fmt == "swiss":
        _pair_swiss(ctx, trow, settings)
    else:
        _pair_scheduled(ctx, trow, trow.doc["schedule"][len(rounds)], settings)


def swiss_records(trow: TournamentRow) -> dict[str, swiss.Record]:
    doc = trow.doc
    players = d.entrants(doc, "entered")
    rated = d.ratings(doc)
    records = {p: swiss.Record(rating=rated.get(p, 0.0)) for p in players}
    for game in d.games(doc):
        for i, p in enumerate(game.players):
            if p not in records:
                continue
            if game.over:
                records[p].score += game.points_of(p)
            if len(game.players) == 1:
                records[p].byes += 1
                continue
            records[p].opponents |= set(game.opponents(p))
            if game.played:
                records[p].seats.append(i)
    return records


def _swiss_exhausted(trow: TournamentRow) -> bool:
    """Fewer than two players are left to pair."""
    return len(d.entrants(trow.doc, "entered")) < 2


def _pair_swiss(ctx: MailContext, trow: TournamentRow, settings: d.Settings) -> None:
    records = swiss_records(trow)
    order = d.entrants(trow.doc, "entered")
    if settings.tables > 2:
        games = [list(t) for t in swiss.swiss_tables(records, order, settings.tables,
                                                     largest=get_game(trow.game).max_players)]
        byes: list[str] = []
    else:
        try:
            pairing = swiss.pair(records, order)
        except swiss.PairingError:
            finish(ctx, trow, note=_("no further round can be paired without a rematch"))
            return
        games = [list(p) for p in pairing.pairs]
        byes = [pairing.bye] if pairing.bye else []
    _open_round(ctx, trow, games, byes=byes)


def _pair_scheduled(ctx: MailContext, trow: TournamentRow, planned: list[list[str]],
                    settings: d.Settings, extra: dict[str, Any] | None = None) -> None:
    """A round of a fixed schedule (round robin, league): games with a withdrawn player are decided
    without a game (the other players win), or left out when the player was removed."""
    doc = trow.doc
    playing = set(d.entrants(doc, "entered"))
    games, decided = [], []
    for players in planned:
        gone = [p for p in players if p not in playing]
        removed = [p for p in gone if (d.entrant(doc, p) or {}).get("status") == "removed"]
        if removed:
            continue
        if gone:
            decided.append({"id": None, "players": players, "played": False, **(extra or {}),
                            "points": [0.0 if p in gone else 1.0 for p in players]})
        else:
            games.append(players)
    _open_round(ctx, trow, games, decided=decided, extra=extra)


def _open_round(ctx: MailContext, trow: TournamentRow, games: list[list[str]], *,
                byes: list[str] | None = None,
                decided: list[dict[str, Any]] | None = None, extra: dict[str, Any] | None = None,
                items_extra: list[dict[str, Any]] | None = None) -> None:
    """Create the round's games and queue one mail per player."""
    doc = trow.doc
    settings = d.settings_from_json(doc["settings"])
    rounds = doc.setdefault("rounds", [])
    number = len(rounds) + 1
    deadline = ctx.now + timedelta(days=settings.round_days)
    round_: dict[str, Any] = {"number": number, "started_at": iso(ctx.now), "deadline_at": iso(deadline),
                              "games": []}
    rounds.append(round_)
    created: list[tuple[GameRow, State]] = []
    for i, players in enumerate(games):
        row, state = create(ctx, trow, players, number)
        item = {"id": row.id, "players": players, "points": None, **(extra or {}),
                **((items_extra or [{}] * len(games))[i])}
        round_["games"].append(item)
        created.append((row, state))
    for bye in byes or []:
        round_["games"].append({"id": None, "players": [bye], "points": [1.0], "played": False})
    round_["games"] += decided or []
    schedule_due(trow)
    failpoints.hit("tournament-paired")  # the kill -9 tests: after the games, before the commit
    ctx.outcomes.append(f"tournament {trow.id} round {number}: {len(created)} games")
    _round_mails(ctx, trow, number, created, byes or [], decided or [])
    if not created and not trow.format.endswith("elimination"):
        advance(ctx, trow)  # a round decided without games (every opponent withdrew)


def schedule_due(trow: TournamentRow) -> None:
    """The scheduler looks again at the earliest deadline of a round still being played."""
    deadlines = [datetime.fromisoformat(r["deadline_at"].replace("Z", "+00:00"))
                 for r in trow.doc.get("rounds", [])
                 if not r.get("handled") and any(g.get("points") is None and g.get("id") for g in r["games"])]
    trow.due_at = min(deadlines) if deadlines else None


def create(ctx: MailContext, trow: TournamentRow, players: list[str], number: int,
           label: str | None = None) -> tuple[GameRow, State]:
    """One game of the tournament, started at once with every seat accepted."""
    doc = trow.doc
    game = get_game(trow.game)
    seats = game.seat_names(len(players))
    names = {p: (d.entrant(doc, p) or {}).get("name", "") for p in players}
    server_keys = {"time_control": dict(doc.get("time_control") or {}),
                   "tournament": {"id": trow.id, "round": number, **({"match": label} if label else {})}}
    row = create_game(ctx, trow.game, dict(doc.get("options") or {}), [], list(players), None, server_keys,
                      names, dict(zip(seats, players, strict=True)))
    subject = row.record.get("subject") or ""
    row.record["subject"] = subject.replace("] ", f"] {trow.id}: ", 1)
    for seat in row.seats:
        seat.accepted = True
    state = ctx.touched[row.id][1]
    _START_NOTES[row.id] = activate(ctx, row, state)  # the first draw, told in the round's mail
    return row, state


# --- the mails of a round ------------------------------------------------------------------------

def _round_mails(ctx: MailContext, trow: TournamentRow, number: int, created: list[tuple[GameRow, State]],
                 byes: list[str], decided: list[dict[str, Any]]) -> None:
    doc = trow.doc
    mine: dict[str, list[tuple[GameRow, State]]] = {}
    for row, state in created:
        for seat in row.seats:
            mine.setdefault(seat.email, []).append((row, state))
    label = _round_label(trow, number)
    for email in d.entrants(doc, "entered"):
        games = mine.get(email, [])
        with ctx.speaking_to(email):
            if len(games) == 1:
                one_game_mail(ctx, trow, email, label(), *games[0])
            elif games:
                _several_games_mail(ctx, trow, email, label(), games)
            elif email in byes:
                _tell(ctx, trow, email, lambda e: _("{round} of {title}: you have a bye (1 point)").format(
                    round=label(), title=title(trow)), lambda e: _resting(trow))
            elif any(email in item["players"] for item in decided):
                _tell(ctx, trow, email, lambda e: _("{round} of {title}: your opponent withdrew; you win "
                                                    "without a game").format(round=label(),
                                                                             title=title(trow)),
                      lambda e: _resting(trow))
            elif trow.format in ("round-robin", "league") and created:
                _tell(ctx, trow, email, lambda e: _("{round} of {title}: you have no game this round"
                                                    ).format(round=label(), title=title(trow)),
                      lambda e: _resting(trow))
    for row, state in created:
        for hook in hooks.BOARD_SENT:  # the deadline line for whoever moves first; observers
            hook(ctx, row, state, lambda row=row: _("Game {id} has started").format(id=row.id))
        _START_NOTES.pop(row.id, None)


def _resting(trow: TournamentRow) -> list[str]:
    """For a player without a game this round: when the next one comes, and where the table is."""
    rounds = trow.doc.get("rounds") or []
    when = datetime.fromisoformat(rounds[-1]["deadline_at"].replace("Z", "+00:00")) if rounds else None
    return [_("Your next game comes with the next round, when this round's games end (at the latest "
              "after its deadline, {when} UTC). The table: tournament {id}").format(
        when=f"{when:%Y-%m-%d %H:%M}" if when else "?", id=trow.id)]


def _round_label(trow: TournamentRow, number: int) -> Callable[[], str]:
    doc = trow.doc
    if trow.format == "league":
        return lambda: _("Season {season}, round {n}").format(season=doc.get("season", 1), n=number)
    if trow.format.endswith("elimination"):
        return lambda: _("Stage {n}").format(n=number)
    return lambda: _("Round {n}").format(n=number)


def one_game_mail(ctx: MailContext, trow: TournamentRow, email: str, label: str, row: GameRow,
                   state: State) -> None:
    names = game_names(ctx.tx, row)
    seat = next(s for s in row.seats if s.email == email)
    others = ", ".join(names.get(s.seat, s.email) for s in row.seats if s.email != email)
    notes = list(_START_NOTES.get(row.id, []))
    lines = [*notes, players_line(row, seat.seat, names),
             _("The game counts for {title}; 'tournament {id}' sends the table.").format(
                 title=title(trow), id=trow.id)]
    if state.to_move == seat.seat:
        headline = _("Your move (move 1). {round} of {title}: game {game} against {players}.").format(
            round=label, title=trow.id, game=row.id, players=others)
        kind = TURN
    else:
        headline = _("{round} of {title}: game {game} against {players}; {player} moves first.").format(
            round=label, title=trow.id, game=row.id, players=others, player=who(state.to_move,
                                                                                seat.seat, names))
        kind = EVENT
    ctx.planned.append(PlannedMail(to=email, seat=seat.seat, game_id=row.id, kind=kind, headline=headline,
                                   sections=[board_section(state, seat.seat, lines)]))


def _several_games_mail(ctx: MailContext, trow: TournamentRow, email: str, label: str,
                        games: list[tuple[GameRow, State]]) -> None:
    sections = []
    first = []
    for row, state in games:
        names = game_names(ctx.tx, row)
        seat = next(s for s in row.seats if s.email == email)
        lines = [players_line(row, seat.seat, names)]
        if state.to_move == seat.seat:
            first.append(row.id)
            lines.append(_("You move first: write 'move {id} MOVE', or reply with one of the lines "
                           "below.").format(id=row.id))
        else:
            lines.append(_("{player} moves first.").format(player=who(state.to_move, seat.seat, names)))
        section = board_section(state, seat.seat, lines, title=row.id)
        section.actions = [ActionGroup(group.label, [Action(text, f"move {row.id} {line} (move 1)")
                                                     for text, line in group.items], moves=group.moves)
                           for group in section.actions]
        sections.append(section)
    headline = ngettext("{round} of {title}: {n} new game", "{round} of {title}: {n} new games",
                        len(games)).format(round=label, title=trow.id, n=len(games))
    if first:
        headline += "; " + _("you move first in {games}").format(games=", ".join(first))
    sections.insert(0, Section(lines=[_("They count for {title}; 'tournament {id}' sends the table.").format(
        title=title(trow), id=trow.id)]))
    ctx.planned.append(PlannedMail(to=email, kind=EVENT,
                                   subject=f"[pbem {trow.id}] {subject_phrase(headline, 140)}",
                                   headline=headline, sections=sections))


def _tell(ctx: MailContext, trow: TournamentRow, email: str, headline: Callable[[str], str],
          lines: Callable[[str], list[str]], sections: Callable[[str], list[Section]] | None = None) -> None:
    """A mail about the tournament (not one game), in the reader's language, "(you)" marking them."""
    with ctx.speaking_to(email), read_by(email):
        first = headline(email)
        ctx.planned.append(PlannedMail(
            to=email, kind=EVENT, subject=f"[pbem {trow.id}] {subject_phrase(first, 140)}",
            headline=first,
            sections=[Section(lines=lines(email)), *(sections(email) if sections else [])]))


# --- elimination --------------------------------------------------------------------------------

def _advance_bracket(ctx: MailContext, trow: TournamentRow) -> None:
    doc = trow.doc
    bracket = elimination.bracket_from_json(doc["bracket"])
    seeds = {p: i for i, p in enumerate(bracket.seeds)}
    playing = set(d.entrants(doc, "entered"))
    changed = True
    while changed:
        changed = False
        for round_ in doc.get("rounds", []):
            for item in round_["games"]:
                match = doc["matches"].setdefault(item["match"], {"games": []})
                if match.get("winner") or item.get("points") is None or item.get("counted"):
                    continue
                item["counted"] = True
                a, b = item["players"]
                pa, pb = item["points"]
                if pa != pb:
                    match["winner"] = a if pa > pb else b
                elif len(match["games"]) >= 2:
                    match["winner"] = min(a, b, key=seeds.__getitem__)  # two draws: the higher seed
                else:
                    match["replay"] = True
                changed = True
        # a withdrawn player loses the matches they would play
        results = bracket_results(doc)
        for match, a, b in elimination.ready(bracket, results, set()):
            state = doc["matches"].get(match.id, {})
            if state.get("winner") or state.get("running"):
                continue
            gone = [p for p in (a, b) if p not in playing]
            if gone:
                doc["matches"].setdefault(match.id, {"games": []})["winner"] = b if a in gone else a
                changed = True
    results = bracket_results(doc)
    winner = elimination.champion(bracket, results)
    if winner is not None:
        finish(ctx, trow)
        return
    due: list[list[str]] = []
    labels: list[dict[str, Any]] = []
    started = {mid for mid, m in doc["matches"].items() if m.get("running") and not m.get("replay")}
    for match, a, b in elimination.ready(bracket, results, started):
        state = doc["matches"].setdefault(match.id, {"games": []})
        if state.get("running") and not state.get("replay"):
            continue
        players = [a, b] if len(state["games"]) % 2 == 0 else [b, a]
        state["running"] = True
        state.pop("replay", None)
        due.append(players)
        labels.append({"match": match.id})
    if due:
        _open_round(ctx, trow, due, items_extra=labels)
        for item in trow.doc["rounds"][-1]["games"]:
            trow.doc["matches"][item["match"]]["games"].append(item["id"])


# --- ladder ---------------------------------------------------------------------------------------

def challenge(ctx: MailContext, trow: TournamentRow, challenger: str, defender: str) -> GameRow:
    """A ladder challenge: its game starts at once, the challenger in the first seat."""
    doc = trow.doc
    number = len(doc.get("challenges", [])) + 1
    row, state = create(ctx, trow, [challenger, defender], number, label=f"C{number}")
    doc.setdefault("challenges", []).append({"id": row.id, "players": [challenger, defender], "points": None,
                                             "challenger": challenger, "defender": defender, "open": True,
                                             "at": iso(ctx.now)})
    with ctx.speaking_to(defender):
        one_game_mail(ctx, trow, defender, _("A ladder challenge"), row, state)
    for hook in hooks.BOARD_SENT:
        hook(ctx, row, state, lambda: _("Game {id} has started").format(id=row.id))
    _START_NOTES.pop(row.id, None)
    return row


def _ladder_result(ctx: MailContext, trow: TournamentRow, item: dict[str, Any]) -> None:
    doc = trow.doc
    challenger, defender = item["challenger"], item["defender"]
    won = item["points"][0] > item["points"][1]
    before = list(doc["ladder"])
    doc["ladder"] = ladder.after_game(before, challenger, defender, won)
    if doc["ladder"] != before:  # the two players, and everyone the change moved down a place
        moved = [p for p in doc["ladder"] if p in before and before.index(p) != doc["ladder"].index(p)]
        for email in moved:
            _tell(ctx, trow, email, lambda e: (
                _("{title}: you take place {n} on the ladder") if e == challenger
                else _("{title}: {player} takes place {n} on the ladder")).format(
                    title=trow.id, player=name_of(ctx, doc, challenger),
                    n=doc["ladder"].index(challenger) + 1),
                lambda e: [_("You are now number {n}.").format(n=doc["ladder"].index(e) + 1),
                           reach_text(trow, doc["ladder"].index(e) + 1)])



def challenges_of(doc: dict[str, Any]) -> list[ladder.Challenge]:
    return [ladder.Challenge(c["challenger"], c["defender"], bool(c.get("open")),
                             datetime.fromisoformat(c["ended_at"].replace("Z", "+00:00"))
                             if c.get("ended_at") else None) for c in doc.get("challenges", [])]


# --- league ---------------------------------------------------------------------------------------

def _advance_league(ctx: MailContext, trow: TournamentRow) -> None:
    doc = trow.doc
    settings = d.settings_from_json(doc["settings"])
    rounds = doc.setdefault("rounds", [])
    longest = max((len(s) for s in doc["schedule"]), default=0)
    if len(rounds) < longest:
        planned = []
        extras = []
        for k, schedule in enumerate(doc["schedule"]):
            if len(rounds) < len(schedule):
                planned += schedule[len(rounds)]
                extras += [{"division": k + 1}] * len(schedule[len(rounds)])
        _pair_league_round(ctx, trow, planned, extras, settings)
        return
    final = [[line.player for line in division_table(doc, k)] for k in range(len(doc["divisions"]))]
    doc.setdefault("seasons", []).append({"number": doc["season"], "divisions": doc["divisions"],
                                          "final": final, "rounds": rounds})
    if doc["season"] >= settings.seasons:
        finish(ctx, trow)
        return
    leaving = {e["email"] for e in doc["entrants"] if e.get("status") != "entered"}
    newcomers = [p for p in d.entrants(doc, "entered") if not any(p in div for div in final)]
    divisions = league.next_season(final, settings.promote, leaving, newcomers, settings.division)
    doc["season"] += 1
    _start_season(doc, divisions, settings)
    for k, division in enumerate(divisions, start=1):
        for email in division:
            _tell(ctx, trow, email, lambda e,
                  k=k: _("{title}: season {season} starts; you play in division {n}"
                                                     ).format(title=trow.id, season=doc["season"], n=k),
                  lambda e, division=division: [", ".join(name_of(ctx, doc, p) for p in division)])
    _advance_league(ctx, trow)


def _pair_league_round(ctx: MailContext, trow: TournamentRow, planned: list[list[str]],
                       extras: list[dict[str, Any]], settings: d.Settings) -> None:
    doc = trow.doc
    playing = set(d.entrants(doc, "entered"))
    games, decided, labels = [], [], []
    for players, extra in zip(planned, extras, strict=True):
        gone = [p for p in players if p not in playing]
        if any((d.entrant(doc, p) or {}).get("status") == "removed" for p in gone):
            continue
        if gone:
            decided.append({"id": None, "players": players, "played": False, **extra,
                            "points": [0.0 if p in gone else 1.0 for p in players]})
        else:
            games.append(players)
            labels.append(extra)
    _open_round(ctx, trow, games, decided=decided, items_extra=labels)


# --- the table and the end ------------------------------------------------------------------------

def finish(ctx: MailContext, trow: TournamentRow, note: str | None = None) -> None:
    trow.status = "over"
    trow.finished_at = ctx.now
    trow.due_at = None
    places = ranking(trow)
    trow.doc["result"] = {"ranking": [[place, p] for place, p in places], "at": iso(ctx.now),
                          **({"note": note} if note else {})}
    ctx.outcomes.append(f"tournament {trow.id} over")
    place_of = dict((p, place) for place, p in places)
    for email in [*d.entrants(trow.doc, "entered", "withdrawn"), trow.organizer]:
        if email in place_of or email == trow.organizer:
            _tell(ctx, trow, email,
                  lambda e: (_("{title} is over: you finished in place {place} of {n}").format(
                      title=title(trow), place=place_of[e], n=len(places)) if e in place_of
                      else _("{title} is over").format(title=title(trow))),
                  lambda e: ([note] if note else []) + [_("The winner: {player}.").format(
                      player=name_of(ctx, trow.doc, places[0][1]))] if places else [],
                  lambda e: table_sections(ctx, trow))


# --- leaving --------------------------------------------------------------------------------------

def leave(ctx: MailContext, trow: TournamentRow, email: str, status: str, by: str) -> list[str]:
    """``email`` leaves (withdrawn by themselves, removed by a moderator): their games in play are
    forfeited (a table game goes on without them when it can); what else they would have played
    is decided without them, or (``withdrawals remove`` in a round robin before half-way, or a
    moderator's removal) their games are taken out of the table. Returns the games ended."""
    doc = trow.doc
    entry = d.entrant(doc, email)
    assert entry is not None
    settings = d.settings_from_json(doc["settings"])
    if (trow.status == "running" and trow.format == "round-robin" and settings.withdrawals == "remove"
            and len(doc.get("rounds", [])) * 2 <= len(doc.get("schedule", []))):
        status = "removed"
    entry["status"] = status
    entry["left_at"] = iso(ctx.now)
    ended = []
    for item in d.running_games(doc):
        if email not in item["players"]:
            continue
        loaded = ctx.load(item["id"])
        if loaded is None or loaded[0].status != "active":
            continue
        row, state = loaded
        seat = next(s.seat for s in row.seats if s.email == email)
        playing = dl.playing_seats(row)
        if len(playing) > 2:
            try:
                notes = dl.drop(row, state, seat, ctx.now, reason="withdrew")
            except EngineError:
                notes = None
            if notes is not None:
                save_game(ctx, row, state)
                announce_position(ctx, row, state, lambda seat=seat, row=row: _(
                    "{player} withdrew from the tournament and left the game").format(
                        player=game_names(ctx.tx, row).get(seat, seat)), notes=notes)
                continue
        dl.forfeit(row, state.score().totals, seat, ctx.now)
        row.record["result"]["withdrew"] = True
        row.updated_at = ctx.now
        save_game(ctx, row, state)
        ended.append(row.id)
        announce_end(ctx, row, state, note=lambda row=row: [_("{player} withdrew from {id}; the game is "
                                                              "forfeited.").format(
            player=name_of(ctx, doc, email), id=trow.id)])
    if trow.format == "ladder" and email in doc.get("ladder", []):
        doc["ladder"].remove(email)
    return ended


def tell_entrants(ctx: MailContext, trow: TournamentRow, headline: Callable[[], str], *,
                  lines: Callable[[], list[str]] | None = None, own: Callable[[str], list[str]] | None = None,
                  exclude: str | None = None) -> None:
    """Every entrant still in (and the organizer) hears of it, each in their language; ``own``:
    lines for the one reader (their games), after the common ``lines``."""
    for email in dict.fromkeys([*d.entrants(trow.doc, "entered"), trow.organizer]):
        if email != exclude:
            _tell(ctx, trow, email, lambda e: headline(),
                  lambda e: [*(lines() if lines else []), *(own(e) if own else [])])
