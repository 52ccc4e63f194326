"""All pairs of a few factors' choices in far fewer rows than their product: the compositions family's
case list (harness.builtin.compositions), built here in plain Python so its ids are the same every run.

Why not a PyPI generator (allpairspy): the contract suite runs inside every matrix entry's environment,
whose packages are its committed lock (locks/<entry>.txt, and a team's own baseline lock); a new
dependency there means re-locking every entry and every team's project before the family can import.
The construction is small: a greedy one in the AETG manner, with no randomness.

* ``all_pairs(sizes)``: rows (one level index per factor) such that every two levels of two factors
  meet in some row. Each row is the best of one greedy candidate per uncovered pair (see _complete).
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


def all_pairs(sizes: Sequence[int], start: Sequence[Row] = ()) -> list[Row]:
    """The start rows, then rows until every pair of levels of every two factors (factor f has sizes[f]
    levels) meets in some row."""
    if any(n < 1 for n in sizes):
        raise ValueError(f"every factor needs at least one level: {list(sizes)}")
    if any(len(row) != len(sizes) or not all(0 <= v < n for v, n in zip(row, sizes)) for row in start):
        raise ValueError(f"a start row is not one level per factor of {list(sizes)}: {list(start)}")
    return _complete(sizes, list(start))


def _complete(sizes: Sequence[int], rows: list[Row]) -> list[Row]:
    """rows, then further rows until every pair is covered. Each further row is the best of one candidate
    per uncovered pair: seeded by that pair, every other factor (in order) taking the level that covers
    the most uncovered pairs with the levels already chosen, ties to the lowest level; the candidate
    covering the most uncovered pairs wins, ties to the earliest seed (in index order)."""
    if len(sizes) < 2:
        return rows or [(a,) for a in range(sizes[0])] if sizes else []
    rows = list(rows)
    uncovered = _pairs(sizes) - covered(rows, sizes)
    while uncovered:
        candidates = [_grown(sizes, seed, uncovered) for seed in sorted(uncovered)]
        best = max(candidates, key=lambda row: len(covered([row], sizes) & uncovered))  # max keeps the first
        uncovered -= covered([best], sizes)
        rows.append(best)
    return rows


def _grown(sizes: Sequence[int], seed: tuple[int, int, int, int], uncovered: set) -> Row:
    i, a, j, b = seed
    row: list[int | None] = [None] * len(sizes)
    row[i], row[j] = a, b
    for f in range(len(sizes)):
        if row[f] is not None:
            continue
        chosen = [(g, level) for g, level in enumerate(row) if level is not None]

        def gain(level: int) -> int:
            return sum(((g, v, f, level) if g < f else (f, level, g, v)) in uncovered for g, v in chosen)

        row[f] = min(range(sizes[f]), key=lambda level: (-gain(level), level))
    return tuple(int(v) for v in row)  # every factor has its level now


def each_choice(sizes: Sequence[int]) -> list[Row]:
    """max(sizes) rows in which every level of every factor appears at least once."""
    return [tuple(r % n for n in sizes) for r in range(max(sizes, default=0))]
