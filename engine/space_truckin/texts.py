"""Space Truckin's words in the reader's language: features, segments, edges, scoring reasons.

The records and score details keep English (they are data, read by tools); what a person reads is
made here, at the time it is shown, from the same facts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.i18n import _, ngettext


def segment_name(kind: str) -> str:
    names = {"planet": _("planet"), "wormhole": _("wormhole"), "station": _("station")}
    return names.get(kind, kind)


def edge_name(code: str) -> str:
    """What an edge of a tile shows: V void, P planet, W wormhole."""
    names = {"V": _("void"), "P": _("planet"), "W": _("wormhole")}
    return names.get(code, code)


def local_segment(described: str) -> str:
    """``Segment.describe`` (``planet N,E``, ``wormhole N-S``) with the kind in the reader's words."""
    kind, _space, edges = described.partition(" ")
    return f"{segment_name(kind)} {edges}".rstrip()


def local_label(kind: str, cells: Sequence[str]) -> str:
    """A feature: ``station at E4``, ``wormhole E4 E5``."""
    if kind == "station":
        return _("station at {cells}").format(cells=" ".join(cells))
    return f"{segment_name(kind)} {' '.join(cells)}"


def local_why(kind: str, k: int, points: int, seam: bool, final: bool) -> str:
    """Why a feature scores what it does; ``k`` is its number of tiles."""
    if kind == "station":
        why = (_("1 + {n} surrounding tiles").format(n=points - 1 - 2 * seam) if final
               else _("station 9"))
    elif final:
        why = ngettext("{n} tile x 1", "{n} tiles x 1", k).format(n=k)
    else:
        why = _("2 tiles: 2") if k == 2 else _("{n} tiles x 2").format(n=k)
    return why + (_(" + 2 seam") if seam else "")


def local_event(event: Mapping[str, Any]) -> tuple[str, str]:
    """(feature, why) of a scoring event of ``score().details``, in the reader's words."""
    cells = list(event["cells"])
    why = local_why(event["kind"], len(cells), int(event["points"]), bool(event["seam"]),
                    bool(event["final"]))
    return local_label(event["kind"], cells), why


def ship_goes(ship: str, tile: str) -> str:
    """The ship names a segment kind the drawn tile does not have."""
    texts = {"cargo": _("a cargo goes on a wormhole segment and {tile} has none."),
             "battleship": _("a battleship goes on a planet segment and {tile} has none."),
             "engineer": _("an engineer goes on a station segment and {tile} has none.")}
    return texts[ship].format(tile=tile) if ship in texts else ship


__all__ = ["edge_name", "local_event", "local_label", "local_segment", "local_why", "segment_name",
           "ship_goes"]
