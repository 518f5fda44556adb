"""Options (edition, symmetric start, location bonus, handicap) and setups (tiles, icons, dice).

A setup is written into the game record in full, so a record replays without any random generator;
:func:`validate_setup` is therefore strict about what a record may contain.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

from engine.alien_city.board import COLOURS, CORNERS, EDITIONS, N_TILES, SEATS, TILE_NUMBERS, Tile
from engine.base import OptionsError, OptionSpec, SetupError

DEFAULT_REACH = 2
MAX_REACH = 20
MAX_EXTRA_CLAIMS = 11  # 3 + 11 caps = every tower on the board

OPTION_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec("edition", "choice", "rules edition: 2.2 (tiles 1-5, black starts) or 1.2 "
               "(piecepack ranks 0,1,2,4,5, dice decide who starts)", "2.2", EDITIONS),
    OptionSpec("symmetric", "flag", "symmetric start: a red and a blue tower stand on the red 1 and "
               "blue 1 tiles before the first move", False),
    OptionSpec("location_bonus", "flag", "each claimed tower scores its tile's number unless another "
               "claimed tower stands on a tile of the same number", False),
    OptionSpec("handicap", "seat-list", "SEAT:REACH:EXTRA, e.g. white:3:1 = white's towers count "
               "customers up to 3 lots away and white has 1 extra cap", None),
)

_KNOWN = ("edition", "symmetric", "location_bonus", "handicap")


def default_handicap() -> dict[str, dict[str, int]]:
    return {seat: {"reach": DEFAULT_REACH, "extra_claims": 0} for seat in SEATS}


def _int_in(value: Any, low: int, high: int, what: str) -> int:
    if isinstance(value, bool):
        raise OptionsError(f"{what} must be a whole number from {low} to {high}, not {value!r}")
    try:
        number = int(str(value).strip())
    except ValueError:
        raise OptionsError(
            f"{what} must be a whole number from {low} to {high}, not {value!r}") from None
    if not low <= number <= high:
        raise OptionsError(f"{what} must be from {low} to {high}, not {number}")
    return number


def parse_handicap_value(value: str) -> tuple[str, dict[str, int]]:
    """``white:3:1`` -> ("white", {"reach": 3, "extra_claims": 1}); ``white:3`` means no extra cap."""
    parts = [p.strip().lower() for p in str(value).split(":")]
    if len(parts) not in (2, 3) or parts[0] not in SEATS:
        raise OptionsError(f"option handicap takes SEAT:REACH:EXTRA with SEAT one of "
                           f"{', '.join(SEATS)}, e.g. white:3:1; not {value!r}")
    reach = _int_in(parts[1], DEFAULT_REACH, MAX_REACH, f"handicap reach for {parts[0]}")
    extra = _int_in(parts[2], 0, MAX_EXTRA_CLAIMS, f"handicap extra claims for {parts[0]}") \
        if len(parts) == 3 else 0
    return parts[0], {"reach": reach, "extra_claims": extra}


def _flag(value: Any, key: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("0", "false", "no", "off", ""):
        return False
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise OptionsError(f"option {key} is on or off (true/false), not {value!r}")


def _handicap(value: Any) -> dict[str, dict[str, int]]:
    result = default_handicap()
    if value is None:
        return result
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list | tuple):
        for item in value:
            seat, entry = parse_handicap_value(item)
            result[seat] = entry
        return result
    if not isinstance(value, Mapping):
        raise OptionsError(f"option handicap is a map of seat to reach and extra_claims, "
                           f"not {value!r}")
    for seat, entry in value.items():
        if seat not in SEATS:
            raise OptionsError(f"option handicap: unknown seat {seat!r}; seats are "
                               f"{', '.join(SEATS)}")
        if isinstance(entry, str):
            _, result[seat] = parse_handicap_value(f"{seat}:{entry}")
            continue
        if not isinstance(entry, Mapping):
            raise OptionsError(f"option handicap.{seat} is {{\"reach\": N, \"extra_claims\": N}}, "
                               f"not {entry!r}")
        unknown = sorted(set(entry) - {"reach", "extra_claims"})
        if unknown:
            raise OptionsError(f"option handicap.{seat}: unknown key {unknown[0]!r}; keys are "
                               f"reach and extra_claims")
        result[seat] = {
            "reach": _int_in(entry.get("reach", DEFAULT_REACH), DEFAULT_REACH, MAX_REACH,
                             f"handicap.{seat}.reach"),
            "extra_claims": _int_in(entry.get("extra_claims", 0), 0, MAX_EXTRA_CLAIMS,
                                    f"handicap.{seat}.extra_claims"),
        }
    return result


def normalize_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The full options dict, defaults filled; OptionsError names the offending key."""
    raw = {str(k).replace("-", "_"): v for k, v in (options or {}).items()}
    for key in raw:
        if key not in _KNOWN:
            raise OptionsError(f"unknown option {key!r} for alien-city; options are "
                               f"{', '.join(_KNOWN)}")
    edition = str(raw.get("edition", "2.2")).strip()
    if edition not in EDITIONS:
        raise OptionsError(f"option edition is one of {', '.join(EDITIONS)}, not "
                           f"{raw.get('edition')!r}")
    return {
        "edition": edition,
        "symmetric": _flag(raw.get("symmetric", False), "symmetric"),
        "location_bonus": _flag(raw.get("location_bonus", False), "location_bonus"),
        "handicap": _handicap(raw.get("handicap")),
    }


def tile_set(edition: str) -> list[tuple[str, int]]:
    """The 20 (colour, number) tiles of an edition, in a fixed order."""
    return [(colour, number) for colour in COLOURS for number in TILE_NUMBERS[edition]]


def roll_for_first(rng: random.Random) -> tuple[str, list[dict[str, list[int]]]]:
    """Edition 1.2: each seat rolls four piecepack dice (faces 0-5); re-roll ties."""
    rounds: list[dict[str, list[int]]] = []
    while True:
        roll = {seat: [rng.randint(0, 5) for _ in range(4)] for seat in SEATS}
        rounds.append(roll)
        sums = {seat: sum(faces) for seat, faces in roll.items()}
        if sums[SEATS[0]] != sums[SEATS[1]]:
            return max(SEATS, key=lambda s: sums[s]), rounds


def create_setup(options: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    tiles = tile_set(options["edition"])
    rng.shuffle(tiles)
    setup: dict[str, Any] = {
        "tiles": [{"color": c, "number": n, "icon": rng.choice(CORNERS)} for c, n in tiles],
    }
    if options["edition"] == "1.2":
        first, rounds = roll_for_first(rng)
        setup["first"] = first
        setup["dice"] = rounds
    else:
        setup["first"] = SEATS[0]
    return setup


def dice_winner(dice: Any) -> str:
    """The seat the recorded dice rounds make first; SetupError if the rounds are not a valid roll-off."""
    if not isinstance(dice, list) or not dice:
        raise SetupError("setup dice must be a non-empty list of rounds {\"black\": [4 faces], "
                         "\"white\": [4 faces]}")
    winner = None
    for number, round_ in enumerate(dice, 1):
        if not isinstance(round_, Mapping) or set(round_) != set(SEATS):
            raise SetupError(f"setup dice round {number} must give the rolls of black and white")
        sums = {}
        for seat in SEATS:
            faces = round_[seat]
            if (not isinstance(faces, list) or len(faces) != 4
                    or not all(isinstance(f, int) and not isinstance(f, bool) and 0 <= f <= 5
                               for f in faces)):
                raise SetupError(f"setup dice round {number}: {seat} must roll four faces 0-5, "
                                 f"not {faces!r}")
            sums[seat] = sum(faces)
        tied = sums[SEATS[0]] == sums[SEATS[1]]
        last = number == len(dice)
        if tied and last:
            raise SetupError(f"setup dice round {number} is a tie, so it cannot be the last round")
        if not tied and not last:
            raise SetupError(f"setup dice round {number} is not a tie, so no re-roll follows it")
        if not tied:
            winner = max(SEATS, key=lambda s: sums[s])
    assert winner is not None
    return winner


def validate_setup(options: Mapping[str, Any], setup: Mapping[str, Any]) -> tuple[tuple[Tile, ...],
                                                                                   str]:
    """Tiles and first seat of a setup; SetupError naming the first problem found."""
    if not isinstance(setup, Mapping):
        raise SetupError("setup must be an object with tiles and first")
    tiles_raw = setup.get("tiles")
    if not isinstance(tiles_raw, list) or len(tiles_raw) != N_TILES:
        count = len(tiles_raw) if isinstance(tiles_raw, list) else "no"
        raise SetupError(f"setup must list exactly {N_TILES} tiles, not {count}")
    tiles = []
    for index, raw in enumerate(tiles_raw):
        if not isinstance(raw, Mapping):
            raise SetupError(f"setup tile {index} must be an object with color, number and icon")
        colour = raw.get("color", raw.get("colour"))
        number = raw.get("number")
        icon = raw.get("icon")
        if colour not in COLOURS:
            raise SetupError(f"setup tile {index}: color must be one of {', '.join(COLOURS)}, "
                             f"not {colour!r}")
        if not isinstance(number, int) or isinstance(number, bool):
            raise SetupError(f"setup tile {index}: number must be a whole number, not {number!r}")
        if icon not in CORNERS:
            raise SetupError(f"setup tile {index}: icon must be one of {', '.join(CORNERS)}, "
                             f"not {icon!r}")
        tiles.append(Tile(colour, number, icon))
    edition = options["edition"]
    want = Counter(tile_set(edition))
    have = Counter((t.colour, t.number) for t in tiles)
    if want != have:
        missing = sorted(want - have)
        extra = sorted(have - want)
        parts = []
        if extra:
            parts.append("unexpected " + ", ".join(f"{c} {n}" for c, n in extra))
        if missing:
            parts.append("missing " + ", ".join(f"{c} {n}" for c, n in missing))
        numbers = ", ".join(str(n) for n in TILE_NUMBERS[edition])
        raise SetupError(f"setup tiles do not match edition {edition} (five tiles per colour "
                         f"numbered {numbers}): {'; '.join(parts)}")
    first = setup.get("first")
    dice = setup.get("dice")
    if first is not None and first not in SEATS:
        raise SetupError(f"setup first must be one of {', '.join(SEATS)}, not {first!r}")
    if dice is not None:
        rolled = dice_winner(dice)
        if first is not None and first != rolled:
            raise SetupError(f"setup first is {first} but the recorded dice make {rolled} first")
        if first is None and edition == "1.2":
            first = rolled
    return tuple(tiles), first or SEATS[0]
