"""All pairs of a few factors' choices in far fewer rows than their product: the compositions family's
case list (harness.builtin.compositions), built here in plain Python so its ids are the same every run.

Why not a PyPI generator (allpairspy): the contract suite runs inside every matrix entry's environment,
whose packages are its committed lock (locks/<entry>.txt, and a team's own baseline lock); a new
dependency there means re-locking every entry and every team's project before the family can import.
The construction is small: a greedy one in the AETG manner, with no randomness.

* ``all_pairs(factors)``: rows (one level index per factor) such that every two levels of two factors
  meet in some row. Each row is seeded by the first uncovered pair (in index order); every other factor
  then takes the level that covers the most uncovered pairs with the levels already chosen, ties to the
  level used least so far, then the lowest index.
* ``each_choice(factors)``: max(levels) rows in which every level of every factor appears (row r takes
  level r mod n of a factor with n levels): what a further choice of one factor needs to meet every
  other factor's levels once.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

Row = tuple[int, ...]


def _pairs(sizes: Sequence[int]) -> set[tuple[int, int, int, int]]:
    """(factor i, level a, factor j, level b) for i < j: every pair a row may cover."""
    return {(i, a, j, b) for i, j in itertools.combinations(range(len(sizes)), 2)
            for a in range(sizes[i]) for b in range(sizes[j])}


def covered(rows: Sequence[Row], sizes: Sequence[int]) -> set[tuple[int, int, int, int]]:
    """The pairs the rows cover."""
    return {(i, row[i], j, row[j]) for row in rows for i, j in itertools.combinations(range(len(sizes)), 2)}


def all_pairs(sizes: Sequence[int], sparing: int | None = None) -> list[Row]:
    """Rows covering every pair of levels of every two factors (factor f has sizes[f] levels).

    ``sparing``: a factor whose levels after the first are costly (eager training): each costly level
    first gets the each-choice rows of the other factors (every level of every other factor once, the
    fewest rows that cover its pairs), then the greedy rows cover the rest with it at its first level."""
    if any(n < 1 for n in sizes):
        raise ValueError(f"every factor needs at least one level: {list(sizes)}")
    rows: list[Row] = []
    if sparing is not None:
        rest = [n for f, n in enumerate(sizes) if f != sparing]
        rows = [(*row[:sparing], costly, *row[sparing:])
                for costly in range(1, sizes[sparing]) for row in each_choice(rest)]
    return _complete(sizes, rows)


def _complete(sizes: Sequence[int], rows: list[Row]) -> list[Row]:
    """rows, then further rows until every pair is covered: each seeded by the first uncovered pair (in
    index order), every other factor taking the level that covers the most uncovered pairs with the
    levels already chosen, ties to the lowest level."""
    if len(sizes) < 2:
        return rows or [(a,) for a in range(sizes[0])] if sizes else []
    rows = list(rows)
    uncovered = _pairs(sizes) - covered(rows, sizes)
    while uncovered:
        i, a, j, b = min(uncovered)
        row: list[int | None] = [None] * len(sizes)
        row[i], row[j] = a, b
        for f in range(len(sizes)):
            if row[f] is not None:
                continue
            chosen = [(g, level) for g, level in enumerate(row) if level is not None]

            def gain(level: int) -> int:
                return sum(((g, v, f, level) if g < f else (f, level, g, v)) in uncovered for g, v in chosen)

            row[f] = min(range(sizes[f]), key=lambda level: (-gain(level), level))
        done = tuple(int(v) for v in row)  # every factor has its level now
        uncovered -= covered([done], sizes)
        rows.append(done)
    return rows


def each_choice(sizes: Sequence[int]) -> list[Row]:
    """max(sizes) rows in which every level of every factor appears at least once."""
    return [tuple(r % n for n in sizes) for r in range(max(sizes, default=0))]
