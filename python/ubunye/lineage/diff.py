"""The rows two tables differ in: rows only in A, rows only in B, and the changed cells of keys in both.

Pure functions over Arrow tables (the caller reads them, usually only the rows of differing buckets, see
``ubunye.cli.diff``). Values are compared as rows-v1 writes them (docs/rows-v1.md sections 4 to 6): two cells are
equal when their canonical JSON is, so a Spark ``int`` and a pandas ``int64`` holding 3 are the same cell, NaN
equals NaN and is not null, and time zones do not matter. Cells are shown in that canonical text (``null`` for a
null).

Example:
    >>> import pyarrow as pa
    >>> a = pa.table({"id": [1, 2, 3], "v": ["x", "y", "z"]})
    >>> b = pa.table({"id": [1, 2, 4], "v": ["x", "Y", "w"]})
    >>> d = diff_tables(a, b, key=["id"])
    >>> [r["id"] for r in d.only_a.rows], [r["id"] for r in d.only_b.rows]
    (['3'], ['4'])
    >>> [(c.key, c.column, c.a, c.b) for c in d.changed.cells]
    [({'id': '2'}, 'v', '"y"', '"Y"')]
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from ubunye.exceptions import UbunyeError
from ubunye.hashing.encode import encode_array, encode_batch
from ubunye.hashing.pieces import pieces
from ubunye.hashing.types import schema_string, type_name
from ubunye.lineage.record import printable

NULL = "null"


class DiffError(UbunyeError):
    r"""Two tables or runs that cannot be diffed as asked (a key that is not a column, data that is gone...).

    Its message is printed as the ``error:`` line, and quotes names from records and tables (an output, a column,
    a location): every character a terminal would act on is shown escaped (:func:`printable`), whoever built it.

    Example:
        >>> str(DiffError("outputs o\x1b[2J, p changed"))
        'outputs o\\x1b[2J, p changed'
    """

    def __init__(self, message: str) -> None:
        super().__init__(printable(message))


@dataclass(frozen=True)
class Rows:
    """Rows of one side: ``count`` in all, ``rows`` the first ``limit`` of them (column -> canonical text)."""

    count: int = 0
    rows: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class CellChange:
    """One cell of a key present once on both sides: its key values, column, and the two canonical texts."""

    key: dict[str, str]
    column: str
    a: str
    b: str


@dataclass(frozen=True)
class Changes:
    """Keys present on both sides whose rows differ: ``rows`` of them in all, holding ``cell_count`` changed cells
    in all, of which ``cells`` lists the first (at most the diff's ``limit``)."""

    rows: int = 0
    cells: list[CellChange] = field(default_factory=list)
    cell_count: int = 0


@dataclass(frozen=True)
class TableDiff:
    """What differs between table A and table B (see :func:`diff_tables`)."""

    key: list[str] | None
    only_a: Rows
    only_b: Rows
    changed: Changes
    rows_a: int
    rows_b: int
    columns_only_a: list[str]
    columns_only_b: list[str]
    types: dict[str, tuple[str, str]]

    @property
    def same(self) -> bool:
        """No row, column or type differs."""
        return not (
            self.only_a.count or self.only_b.count or self.changed.rows or self.columns_only_a
            or self.columns_only_b or self.types
        )  # fmt: skip


def _texts(table: pa.Table) -> dict[str, list[str]]:
    """Column -> canonical text of every cell (``null`` for a null), in row order."""
    out: dict[str, list[str]] = {name: [] for name in table.column_names}
    for batch in table.combine_chunks().to_batches():
        for piece in pieces(batch):  # each piece's texts within Arrow's 2 GiB string arrays
            for i, name in enumerate(table.column_names):
                texts = encode_array(piece.column(i), name).to_pylist()
                out[name].extend(NULL if v is None else v for v in texts)
    return out


def _lines(table: pa.Table) -> list[str]:
    batches = table.combine_chunks().to_batches()
    return [line for batch in batches for piece in pieces(batch) for line in encode_batch(piece).to_pylist()]


def _check(table: pa.Table, side: str) -> None:
    names = table.column_names
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise DiffError(f"table {side} has column {dup!r} twice")
    schema_string(table.schema)  # the rows-v1 type checks: a column diff cannot encode is named here


def diff_tables(a: pa.Table, b: pa.Table, key: list[str] | None = None, limit: int = 20) -> TableDiff:
    """Rows only in A, rows only in B and (with a ``key``) the changed cells of keys present in both.

    Without a key, rows are compared whole, as multisets (a row twice in A and once in B is once only in A).
    With a key, a key found once on each side is compared cell by cell over the columns both have; a key found
    more than once on a side is compared as a multiset of whole rows. ``limit`` bounds each list (counts are
    always complete: rows only in A or B, changed rows and changed cells). Columns present on one side only, and
    columns whose rows-v1 type differs, are named.

    Example:
        >>> import pyarrow as pa
        >>> d = diff_tables(pa.table({"x": [1, 1, 2]}), pa.table({"x": [1, 2, 3]}))
        >>> d.only_a.count, d.only_b.rows
        (1, [{'x': '3'}])
    """
    _check(a, "A")
    _check(b, "B")
    if limit < 0:
        raise DiffError(f"limit must be >= 0, got {limit}")
    cols_a, cols_b = set(a.column_names), set(b.column_names)
    if key is not None and not key:
        raise DiffError("the key is empty: give at least one column, or no key to compare whole rows")
    for name in key or []:
        if list(key or []).count(name) > 1:
            raise DiffError(f"key column {name!r} is repeated")
        for side, cols in (("A", cols_a), ("B", cols_b)):
            if name not in cols:
                raise DiffError(f"key column {name!r} is not a column of table {side} (columns: {sorted(cols)})")
    types = {}
    for name in sorted(cols_a & cols_b):
        ta = type_name(a.schema.field(name).type, name)
        tb = type_name(b.schema.field(name).type, name)
        if ta != tb:
            types[name] = (ta, tb)
    only_cols_a, only_cols_b = sorted(cols_a - cols_b), sorted(cols_b - cols_a)
    texts_a, texts_b = _texts(a), _texts(b)
    if not key:
        # Whole rows over the columns both have: the canonical line of those columns.
        common = [n for n in a.column_names if n in cols_b]
        line_a = _lines(a.select(common)) if common else ["{}"] * a.num_rows
        line_b = _lines(b.select(common)) if common else ["{}"] * b.num_rows
        only_a, only_b = _multiset(line_a, line_b, texts_a, texts_b, range(a.num_rows), range(b.num_rows), limit)
        return TableDiff(None, only_a, only_b, Changes(), a.num_rows, b.num_rows, only_cols_a, only_cols_b, types)
    groups_a, groups_b = _groups(texts_a, key, a.num_rows), _groups(texts_b, key, b.num_rows)
    common = [n for n in a.column_names if n in cols_b]
    line_a = _lines(a.select(common))
    line_b = _lines(b.select(common))
    rows_a: list[int] = []  # rows only in A / only in B, in row order
    rows_b: list[int] = []
    changed_rows = changed_cells = 0
    cells: list[CellChange] = []
    for k in list(groups_a) + [k for k in groups_b if k not in groups_a]:
        ia, ib = groups_a.get(k, []), groups_b.get(k, [])
        if len(ia) == 1 and len(ib) == 1:
            moved = [c for c in common if c not in key and texts_a[c][ia[0]] != texts_b[c][ib[0]]]
            if moved:
                changed_rows += 1
                changed_cells += len(moved)
                for c in moved:
                    if len(cells) < limit:
                        cells.append(
                            CellChange(dict(zip(key, k, strict=True)), c, texts_a[c][ia[0]], texts_b[c][ib[0]])
                        )
            continue
        gone, new = _unmatched(line_a, line_b, ia, ib)
        rows_a += gone
        rows_b += new
    rows_a.sort()
    rows_b.sort()
    only_a = Rows(len(rows_a), [_row(texts_a, i) for i in rows_a[:limit]])
    only_b = Rows(len(rows_b), [_row(texts_b, j) for j in rows_b[:limit]])
    changes = Changes(changed_rows, cells, changed_cells)
    return TableDiff(list(key), only_a, only_b, changes, a.num_rows, b.num_rows, only_cols_a, only_cols_b, types)


def _row(texts: dict[str, list[str]], i: int) -> dict[str, str]:
    return {c: v[i] for c, v in texts.items()}


def _groups(texts: dict[str, list[str]], key: list[str], n: int) -> dict[tuple[str, ...], list[int]]:
    out: dict[tuple[str, ...], list[int]] = defaultdict(list)
    columns = [texts[k] for k in key]
    for i in range(n):
        out[tuple(c[i] for c in columns)].append(i)
    return out


def _unmatched(
    line_a: list[str], line_b: list[str], ia: Sequence[int], ib: Sequence[int]
) -> tuple[list[int], list[int]]:
    """The rows of ``ia`` (in A) and ``ib`` (in B) left over once equal lines are paired off, as multisets."""
    left, right = Counter(line_b[j] for j in ib), Counter(line_a[i] for i in ia)
    rows_a, rows_b = [], []
    for i in ia:
        if left[line_a[i]]:
            left[line_a[i]] -= 1
        else:
            rows_a.append(i)
    for j in ib:
        if right[line_b[j]]:
            right[line_b[j]] -= 1
        else:
            rows_b.append(j)
    return rows_a, rows_b


def _multiset(
    line_a: list[str],
    line_b: list[str],
    texts_a: dict[str, list[str]],
    texts_b: dict[str, list[str]],
    ia: range,
    ib: range,
    limit: int,
) -> tuple[Rows, Rows]:
    rows_a, rows_b = _unmatched(line_a, line_b, ia, ib)
    return (
        Rows(len(rows_a), [_row(texts_a, i) for i in rows_a[:limit]]),
        Rows(len(rows_b), [_row(texts_b, j) for j in rows_b[:limit]]),
    )
