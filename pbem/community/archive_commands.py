"""Mail commands ``history`` and ``standings``: the archive and the ratings, answered by mail.

Both only read. They run inside the mail's transaction like every handler, so they see the store
through the ``Tx`` interface: ``history`` needs only one player's games (``games_for_email``);
``standings`` needs every finished game (``Tx.search_games``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from pbem.archive.names import person_name
from pbem.archive.search import FilterError, check_game, game_date, make_filters, table
from pbem.clocks import reliability
from pbem.commands.parsing import GAME_ID, Command, CommandError, register_verb
from pbem.community.standings import compute, table_text, title_of
from pbem.i18n import N_, _, ngettext
from pbem.outbox.compose import Section
from pbem.processing import handlers, hooks
from pbem.processing.context import MailContext
from pbem.processing.games import CommandFailed
from pbem.processing.handlers import register_handler
from pbem.store.base import GameRow
from pbem.store.secret import secret_in

HISTORY_USAGE = N_("history GAME | history [GAME-NAME] [from DATE] [to DATE] [player ADDRESS]   (a "
                 "game's moves, or your finished games; dates YYYY-MM-DD)")
STANDINGS_USAGE = N_("standings [GAME-NAME]   (games, wins, losses, draws and Elo rating)")
MAX_ROWS = 50
RATING_NOTE = N_(
    "Ratings: Elo from 1500 with K=32, expected score 1/(1+10^((Rb-Ra)/400)), in the order games "
    "finished. Games of more than two players count as results between every two players, weighted "
    "K/(n-1): winners beat the others and tie among themselves. Resignations and forfeits are losses.")
RELIABILITY_NOTE = N_(
    "ON TIME: of each player's finished games (of every game), the share not lost on time; an open "
    "challenge may ask for it: new GAME open reliable 90.")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_history(line: str, words: list[str], in_game_reply: bool) -> Command | CommandError:
    """``history ac-12`` lists a game's moves; ``history alien-city from 2026-01-01`` searches games
    (``history`` alone: see ``do_history``)."""
    if len(words) == 1 and GAME_ID.match(words[0]):
        return Command("history", line, game=words[0].lower())
    args: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i].lower().strip(",;")
        if word in ("from", "to", "player"):
            if i + 1 >= len(words):
                what = _("an address") if word == "player" else _("a date (YYYY-MM-DD)")
                return CommandError(line, _("'{word}' needs {what}: {usage}").format(
                    word=word, what=what, usage=_(HISTORY_USAGE)))
            if word in args:
                return CommandError(line, _("'{word}' is given twice: {usage}").format(
                    word=word, usage=_(HISTORY_USAGE)))
            value = words[i + 1].strip(",;<>")
            if word == "player" and "@" not in value:
                return CommandError(line, _("'player' takes a mail address, not {value!r}: {usage}").format(
                    value=value, usage=_(HISTORY_USAGE)))
            args[word] = value.lower() if word == "player" else value
            i += 2
            continue
        if "game" in args:
            return CommandError(line, _("I do not understand {word!r} here: {usage}").format(
                word=words[i], usage=_(HISTORY_USAGE)))
        try:
            args["game"] = check_game(word)
        except FilterError as exc:
            return CommandError(line, f"{exc}. {_(HISTORY_USAGE)}")
        i += 1
    try:
        make_filters(game=args.get("game"), date_from=args.get("from"), date_to=args.get("to"))
    except FilterError as exc:
        return CommandError(line, f"{exc}. {_(HISTORY_USAGE)}")
    return Command("history", line, args=args)


def parse_standings(line: str, words: list[str], in_game_reply: bool) -> Command | CommandError:
    if len(words) > 1:
        return CommandError(line, _("standings takes at most a game name: {usage}").format(
            usage=_(STANDINGS_USAGE)))
    if not words:
        return Command("standings", line)
    try:
        return Command("standings", line, args={"game": check_game(words[0])})
    except FilterError as exc:
        return CommandError(line, f"{exc}. {_(STANDINGS_USAGE)}")


def do_history(ctx: MailContext, command: Command) -> None:
    """``history`` alone in a mail about a game (a reply, or its subject) is that game's moves, as
    each of its mails offers them ("history ac-12": a game id may be left out in a reply); in a
    mail of its own, the sender's finished games."""
    if command.game or (not command.args and ctx.context_game):
        handlers.do_history(ctx, command)
        return
    player = command.args.get("player") or ctx.mail.from_addr
    try:
        filters = make_filters(player=player, game=command.args.get("game"),
                               date_from=command.args.get("from"), date_to=command.args.get("to"))
    except FilterError as exc:
        raise CommandFailed(str(exc)) from None
    rows = [r for r in ctx.tx.games_for_email(filters.player or "") if filters.matches(r)]
    rows.sort(key=lambda r: (game_date(r) or _EPOCH, r.id), reverse=True)
    shown = rows[:MAX_ROWS]
    lines = [ngettext("{n} game: {which}, newest first.", "{n} games: {which}, newest first.",
                      len(rows)).format(n=len(rows), which=filters.describe())]
    if len(rows) > len(shown):
        lines.append(_("The newest {n} are shown; narrow the search with 'from DATE' and 'to DATE'.").format(
            n=len(shown)))
    if not rows:
        lines.append(_("Usage: {usage}").format(usage=_(HISTORY_USAGE)))
    ctx.reply(Section(title=_("History of {player}").format(player=player), lines=lines,
                      pre=table(shown) if rows else None))


def finished_games(ctx: MailContext, game: str | None) -> list[GameRow]:
    """Every finished game (of ``game``), oldest first as the ratings are applied."""
    return list(reversed(ctx.tx.search_games(game=game, status="over")))


def do_standings(ctx: MailContext, command: Command) -> None:
    game = command.args.get("game")
    everything = finished_games(ctx, None)
    standings = compute([row for row in everything if game is None or row.game == game], game)
    reliable = reliability.compute(everything)
    if not standings:
        ctx.reply(Section(title=_("Standings"), lines=[
            _("No finished games of {game} yet.").format(game=title_of(game)) if game
            else _("No finished games yet.")]))
        return
    me = ctx.mail.from_addr
    key = secret_in(ctx.tx)
    for name, lines in standings.items():
        notes = []
        for rank, line in enumerate(lines, 1):
            if line.player == me:
                notes.append(ngettext(
                    "You are number {rank} of {count}: {games} game, {wins} won, {losses} lost, {draws} "
                    "drawn, rating {rating}.",
                    "You are number {rank} of {count}: {games} games, {wins} won, {losses} lost, {draws} "
                    "drawn, rating {rating}.", line.games).format(
                    rank=rank, count=len(lines), games=line.games, wins=line.wins, losses=line.losses,
                    draws=line.draws, rating=f"{line.rating:.0f}"))
        # anyone may ask: players as the public site names them (a nickname, else the pseudonym,
        # never the address), the reader marked
        names = {line.player: person_name(ctx.tx.get_player(line.player), line.player, key)
                 for line in lines}
        if me in names:
            names[me] = _("{seat} (you)").format(seat=names[me])
        ctx.reply(Section(title=_("Standings: {game}").format(game=title_of(name)), lines=notes,
                          pre=table_text(name, lines, reliable, names, width=78)))
    mine = reliability.of_player(ctx.tx.games_for_email(me), me)
    ctx.reply(Section(lines=[_(RATING_NOTE), _(RELIABILITY_NOTE),
                             _("Your reliability: {text}").format(text=reliability.long_text(mine))]))


def _mark_finished(ctx: MailContext, row: GameRow, state: object) -> None:
    """Archive searches by date read ``finished_at``; stamp it when a game reaches its end."""
    if row.status == "over" and row.finished_at is None:
        row.finished_at = ctx.now


register_verb("history", HISTORY_USAGE, parse_history)
register_verb("standings", STANDINGS_USAGE, parse_standings)
register_handler("history", do_history)
register_handler("standings", do_standings)
hooks.GAME_SAVED.append(_mark_finished)
