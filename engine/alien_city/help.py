"""Help texts sent by mail (``help alien-city``, ``help rulings`` ...): plain ASCII, under 72 columns.

The rulings text is the server's promise about every point where the printed rules are silent or
disagree; it must match what the engine does, so change both together.
"""

from __future__ import annotations

from engine.i18n import N_, _

RULES = N_("""\
ALIEN CITY (Michael Schoessow) - rules as this server plays them

Board: 20 tiles in 4 columns x 5 rows, each 2x2 lots: 80 lots, columns
A-H (west to east), rows 1-10 (south to north); A1 is south-west. Each
tile has a guild colour (red, blue, green, black), a number and one
icon lot (one of its four corners).

Seats: black and white, named by cap colour.
  black: towers 2 red, 3 blue, 2 green; 3 caps
  white: towers 3 red, 2 blue, 2 green; 3 caps
  each: domes 3 red, 3 blue, 3 green, 3 black
Edition 2.2: black moves first. Edition 1.2: the server rolls four
piecepack dice (faces 0-5) for each seat, highest sum starts, ties are
re-rolled; the rolls are recorded and shown.

A turn: build one structure from your supply on a legal lot; then you
may claim (cap) one unclaimed tower anywhere on the board, including
the one you just built, if you have a cap left - but not if your build
ends the game. If the other seat cannot build, you move again; if
neither can, the game is over.

A structure of kind tower/dome and colour c may go on lot L only if:
 1. L is empty;
 2. streets: afterwards the empty lots still form one network (joined
    north/south/east/west), at least one empty lot remains, and every
    structure (the new one too) still touches an empty lot;
 3. icon lot: L is its tile's icon lot only if no other empty lot of
    that tile satisfies rule 2;
 4. towers: on a tile that is not black and holds fewer than 2
    structures the tower must match the tile's colour; black tiles and
    tiles with 2+ structures take any tower;
 5. domes: a c dome goes on a c tile; but if no lot of any c tile
    satisfies rules 1-3, c domes may go on any lot that does.

Scoring, when neither seat can build:
 - street distance between two structures: the fewest empty lots on a
   path of empty lots from one to the other (a shared empty neighbour
   is distance 1; touching structures are not adjacent by street);
 - each claimed tower: customers (structures of other colours within
   2, or the owner's handicap reach) x distance to the nearest other
   tower of its colour (0 if there is none);
 - Control Guild bonus: for each unclaimed green tower, separately for
   red and blue: if the nearest tower of that colour is d <= 4 away
   and claimed, its owner scores 10 - 2d (ties: see rulings);
 - location bonus (variant): each claimed tower scores its tile's
   number unless another claimed tower stands on a tile with the same
   number.
Higher total wins; equal totals are a draw.

Variants: symmetric start (a white red tower and a black blue tower
stand on the red 1 and blue 1 tiles, on the lot diagonally opposite
the icon; both seats then hold 2 red, 2 blue, 2 green towers);
location bonus; handicap (per seat: customer reach and extra caps).
""")

RULINGS = N_("""\
ALIEN CITY - RULINGS (where the printed rules are silent or disagree)

 1. Editions. 2.2: five tiles per colour numbered 1-5, black moves
    first. 1.2 (piecepack): ranks null, ace, 2, 4, 5 - numbers 0, 1, 2,
    4, 5 (no 3); suns = red, arms = blue, crowns = green, moons =
    black. Who starts is rolled: four dice faces 0-5 per seat, highest
    sum starts, ties re-rolled; the rolls are part of the record.
 2. Setup is random (tiles shuffled, each icon corner uniformly random)
    and stored in full in the record, so replays need no randomness.
 3. The street rule (2.2 rule 4, 1.2 rule 6) is read exactly: after a
    build the empty lots are non-empty and 4-connected, and every
    built lot, the new one included, has an empty 4-neighbour.
 4. Icon lot: it may be built on only if no other empty lot of its
    tile satisfies the street rule ("legally buildable" reduces to the
    street rule because colour rules are the same for a whole tile).
 5. First-two rule: counted before the build. On a non-black tile
    holding 0 or 1 structures a tower must match the tile; black tiles
    always take any tower; tiles with 2+ structures take any tower.
 6. Dome fallback, both editions: c domes go on c tiles; if no lot of
    any c tile satisfies rules 1-3 (empty, streets, icon lot), c domes
    may go on any lot satisfying rules 1-3, and the first-two rule is
    waived for that dome (1.2 states this precedence). The test is
    about the board, not about which seat holds the dome.
 7. Only towers can be claimed; a claim names any unclaimed tower on
    the board, including the one just built, and uses one cap.
 8. No claim on the last turn: a build after which neither seat can
    build ends the game, and a move claiming with such a build is
    rejected whole (rule "no claim on the last turn"). The legal-move
    list marks such builds with *.
 9. Turn order: after a move the other seat moves if it has a legal
    build, otherwise the same seat again if it has one, otherwise the
    game is over. Skipped turns are automatic and announced; they are
    not moves in the record.
10. Street distance: the fewest empty lots on a 4-connected path of
    empty lots whose first lot touches one structure and whose last
    lot touches the other; one shared empty neighbour = 1. Structures
    that touch only each other are not adjacent by street.
11. Customer base: towers and domes of colours other than the tower's,
    of either seat, claimed or not, at street distance <= reach (2;
    a handicap may raise it for one seat's towers).
12. No competitor: if no other tower of the claimed tower's colour is
    on the board, that tower scores 0.
13. Control Guild bonus: for each unclaimed green tower, separately for
    red and for blue, take the nearest tower(s) of that colour,
    claimed or not, at distance d. If d <= 4 the owner of that nearest
    tower scores 10 - 2d. An unclaimed nearest tower pays nobody.
    Ties at distance d: edition 2.2 pays the bonus once, only if one
    seat owns all the tied towers; edition 1.2 pays no bonus on a tie.
14. Location bonus (variant, either edition): a claimed tower scores its
    tile's number unless another claimed tower of either seat stands on
    a tile with the same number - then none of them does (two claimed
    towers on the same tile share its number, so neither scores it).
15. Symmetric variant: white's red tower and black's blue tower stand,
    unclaimed, on the red 1 and blue 1 tiles, diagonally opposite the
    icon; they count as built (also for the first-two rule).
16. Handicap: per seat, customer reach (2 to 20) and extra caps (0 to
    11), written SEAT:REACH:EXTRA, e.g. white:3:1.
17. Totals are tower scores plus bonuses; equal totals are a draw.
""")

NOTATION = N_("""\
ALIEN CITY - MOVE NOTATION

A move builds one structure and may claim one tower:
    tower red C4
    dome black A1
    tower blue E7 claim C4     (the claim may name the lot just built)

Lots: column A-H (west to east) and row 1-10 (south to north).
Kinds: tower, dome. Colours: red, blue, green, black (domes only).

Shortcuts (any upper/lower case):
    TR C4        T/D for the kind, R/B/G/K for the colour (K = black)
    RT-C4        the two letters in either order, hyphen optional
    red tower c4 words in either order
    DK A1 + C4   claim written "claim C4", "+ C4", "+C4" or "(C4)"
Extra spaces and a trailing period are ignored. The server answers a
move it cannot read with the word it did not understand and the
nearest legal moves, and an illegal move with the rule it breaks.
""")


def help_topics() -> dict[str, str]:
    return {"rules": _(RULES), "rulings": _(RULINGS), "notation": _(NOTATION)}
