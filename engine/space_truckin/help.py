"""Help texts: the rules as the server enforces them, the rulings it had to make, and the notation.

Plain ASCII, prose wrapped at 72 columns: they are mailed as they are.
"""

RULES = """\
SPACE TRUCKIN' - a tile-laying game for 2 to 5 players (red, blue,
green, yellow, white).

Board: 9 x 9 cells, columns A-I (west to east), rows 1-9 (south to
north). The board is a torus: column I touches column A and row 9
touches row 1. The start tile (cap-straight, rotation 0) is on E5.

Tiles: 81 space tiles (the start tile included) and 10 black holes,
shuffled into one hidden pile. Each edge of a space tile is void,
planet or wormhole; two tiles may touch only where their edges are of
the same kind. Inside a tile are planet segments, wormhole segments
(ending at edges or at a nexus, station or planet) and perhaps a
station. Rotations are clockwise: at 90 the tile's N edge faces east.
Some copies carry an arrow in a corner (see the notation below).

Ships: each player has 7 ships in the pool and 3 in reserve.

A turn: the server draws the top tile and reads its clock's seconds:
0-14 NE, 15-29 SE, 30-44 SW, 45-59 NW. A space tile goes on any free
cell where all touching edges match; a tile with an arrow must be
rotated so that one of its arrows lies in that corner. A tile that
fits nowhere is discarded and the next one drawn. Then you may deploy
one ship from your pool on a segment of the tile just placed - a
battleship on a planet, a cargo on a wormhole, an engineer on the
station - but not on a segment whose feature (segments joined across
edges) already carries a ship.

Completion (scored at once; the ships on it go back to their pools):
  wormhole: both ends reach a nexus, station or planet, or it closes
    a loop;
  planet: none of its planet edges is open;
  station: all 8 surrounding cells hold tiles.
Points: a wormhole or planet scores 2 per tile it spans (a tile counts
once), but exactly 2 tiles score 2; a station scores 9. The player(s)
with most ships on the feature score it; ties score in full.
Completing a planet moves one reserve ship (if any is left) to each
scoring player's pool. Edge bonus: +2 for a feature that crosses the
torus seam.

Black hole (instead of a space tile), one of:
  (a) remove one cargo from an incomplete wormhole - it leaves the
      game;
  (b) swap two placed tiles, each in any rotation, if both then match
      their new neighbours (arrows do not count; ships stay on their
      tiles; features completed by the swap score);
  (c) do nothing.

End: after the turn in which the pile runs out. Incomplete features
then score: wormhole and planet 1 point per tile to the majority,
station 1 + number of surrounding tiles to its engineer, edge bonus
included. The highest total wins; equal totals share the win.
"""

RULINGS = """\
Rulings the server makes where the rules are silent:

 1. Tile names. Tiles are named KIND#N, copies numbered from 1; the
    copies with arrows come first (see "Arrows" in the notation). The
    start tile is cap-straight#4 (no arrow). Black holes are
    blackhole#1 .. blackhole#10.
 2. Arrows. An arrow at corner NE at rotation 0 lies at SE at 90, SW
    at 180, NW at 270. A one-arrow tile therefore has exactly one
    allowed rotation per quadrant, a two-arrow tile two. The quadrant
    is read for every draw, black holes included, but means nothing
    for them.
 3. Discards are automatic: when the drawn space tile has no free cell
    and allowed rotation that matches all neighbours, the server
    discards it, says so, and draws again for the same player with a
    fresh clock reading. The discarded tile leaves the game. If that
    empties the pile, the game ends.
 4. Game end: the game ends after the move made with the last tile of
    the pile (a black hole too), or at once when the last tile is
    discarded.
 5. A wormhole that ends at a station or a planet does not join that
    station or planet: they are separate features. A nexus ends every
    wormhole that reaches it.
 6. A feature that reaches the same tile twice (e.g. around the torus)
    counts that tile once.
 7. The 2-tile exception applies to completed wormholes and planets
    only; the edge bonus is added on top (a 2-tile feature across the
    seam scores 4). The edge bonus is +2 once per feature, however
    often it crosses the seam.
 8. Station edge bonus: a station scores the bonus when one of its
    eight surrounding cells lies across the seam (the station is in
    column A or I or row 1 or 9) and, for an incomplete station at the
    end, that cell holds a tile.
 9. A ship may be deployed on a feature that the same placement
    completes; it scores at once. Ships are interchangeable: the role
    (cargo, battleship, engineer) is chosen at deployment.
10. The planet bonus ship goes to every scoring player of the completed
    planet, however the planet was completed (placement or swap). With
    an empty reserve there is no bonus; the server says so.
11. Black hole removal may take any player's cargo, one's own included,
    from a wormhole segment that carries one; the segment is named by
    any of its edges. The ship leaves the game.
12. Swaps: `swap A ra B rb` means that afterwards cell A holds the tile
    that was on B, at rotation ra, and B the tile that was on A, at
    rotation rb (rotations are absolute). The two cells must differ.
    They may be neighbours, across the seam too: each tile is checked
    against its neighbours after the swap, so the edge the two share
    is checked between the two swapped tiles. The start tile may be
    swapped. A swap of two identical tiles is allowed.
13. After a swap every feature is recomputed. A feature scores if it is
    complete after the swap and was not complete (as the same set of
    tile segments) before it, and so does any complete feature
    carrying ships. A completed feature that a swap breaks up may be
    completed and scored again.
14. Majority counts ships on the feature. A completed feature without
    ships scores nothing.
15. Scores during the game are the points banked so far; what
    incomplete features would add at the end is shown separately as a
    provisional figure.
16. Players take turns in seat order (red, blue, green, yellow, white)
    starting with the player the server picked at random.
17. Dropped players. A player who forfeits at a move deadline is
    dropped and the game goes on while at least two players are left
    (the record says so in a "drop" entry). The dropped player leaves
    the turn order; if it was their turn, the next remaining player in
    seat order plays the tile already drawn, with the same clock
    quadrant (no new draw). The dropped player's ships stay on the
    board and still count for majorities, so features they lead still
    score for them, and their banked points stay; but they take no
    more turns and cannot win: they are ranked after every player
    still in the game, the last one dropped first. Boards mark them
    DROPPED. When only one player would be left, the game ends instead
    and that player wins.
"""

NOTATION = """\
Moves (case does not matter, extra spaces are fine):

  place E5 90               put the drawn tile on E5 at rotation 90
                            (0, 90, 180, 270, clockwise)
  place E5 90 cargo E       ... and a cargo on the wormhole segment at
                            the tile's E edge as placed
  place E5 90 battleship N  ... and a battleship on the planet segment
                            at the N edge
  place E5 90 engineer      ... and an engineer on the tile's station
  remove F3 S               black hole: the cargo on the wormhole
                            segment at F3's S edge is lost
  swap E5 0 F6 270          black hole: E5 gets F6's tile at rotation
                            0, F6 gets E5's tile at rotation 270
  pass                      black hole: do nothing

A segment touching several edges may be named by any of them; records
use its first edge in the order N, E, S, W. "E5 90" alone means
"place E5 90". If a tile has just one segment of a kind, the edge may
be left out (place E5 90 cargo).

Swaps: in "swap A ra B rb" the tile that lands on A gets rotation ra
and the tile that lands on B gets rotation rb. Rotations are absolute,
not turns from where a tile stood. The order of the two cells does not
matter: "swap F6 270 E5 0" is the same move as "swap E5 0 F6 270"
(records write the cells in the order A1, A2, ... I9).

Arrows: of each kind, the copies with arrows are numbered first.
straight#1 and curve#1 carry two arrows (NE and SW at rotation 0),
straight#2 and curve#2 one (NE). Every other kind that has arrows has
one arrow (NE) on copy #1 only. junction4, two-caps-adjacent and full
have no arrow on any copy, nor has the start tile cap-straight#4.
Arrows matter only when a tile is placed; a swap ignores them.
"""
