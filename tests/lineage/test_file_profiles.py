"""Per-file profile partials in the record store's cache: written whole, one folder per key and bucket count,
nothing inconsistent ever used."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubunye.exceptions import RecordError
from ubunye.hashing.delta_files import FileProfiles, FileSums
from ubunye.hashing.profile import merge, profile_sums
from ubunye.lineage.file_profiles import pack_partial, profile_tag, profiles_document, unpack_partial
from ubunye.lineage.file_sums import FileSumsCache

TABLE = "/data/sales"


def _part(values: list[float | None], key=("x",), buckets=8):
    return profile_sums(
        pa.table({"x": pa.array(values, pa.float64())}), key=list(key) if key else None, buckets=buckets
    )


def _profiles(key=("x",), buckets=8, version=1) -> FileProfiles:
    parts = {"a.parquet": _part([1.5, None, float("nan")], key, buckets), "b c.parquet": _part([], key, buckets)}
    files = {p: ((10 + i, 5, None if i else "sha256:" + "d" * 64), part) for i, (p, part) in enumerate(parts.items())}
    return FileProfiles(TABLE, "table-id", "spark", parts["a.parquet"].schema, version, key, buckets, files)


@pytest.mark.parametrize("root", ["local", "memory"])
def test_round_trip_newest_wins_and_each_key_and_bucket_count_has_its_own(tmp_path, root):
    cache = FileSumsCache(tmp_path if root == "local" else f"memory://file-profiles-{uuid.uuid4().hex}/records")
    assert cache.load_profiles(TABLE, "spark", ("x",), 8) is None
    cache.save_profiles(_profiles(version=1))
    cache.save_profiles(_profiles(version=2))
    cache.save_profiles(_profiles(key=None, buckets=8))
    cache.save_profiles(_profiles(buckets=0))
    assert cache.load_profiles(TABLE, "spark", ("x",), 8) == _profiles(version=2)
    assert cache.load_profiles(TABLE, "spark", None, 8) == _profiles(key=None, buckets=8)
    assert cache.load_profiles(TABLE, "spark", ("x",), 0) == _profiles(buckets=0)
    assert cache.load_profiles(TABLE, "spark", ("x",), 16) is None
    assert cache.load_profiles(TABLE, "deltalake", ("x",), 8) is None
    assert cache.load(TABLE, "spark") is None  # profiles are no sums
    cache.save(FileSums(TABLE, "table-id", "spark", "s", 1, {}))
    assert cache.load_profiles(TABLE, "spark", ("x",), 8) == _profiles(version=2)
    if root == "local":
        folder = Path(cache.where_profiles(TABLE, "spark", ("x",), 8))
        assert len(list(folder.glob("*.json.gz"))) == 1  # the older one was deleted once the newer was in place
        assert folder.name.endswith("-" + profile_tag(("x",), 8))


PARTS = st.builds(
    lambda values, key, buckets: _part(values, key if buckets else None, buckets),
    st.lists(st.one_of(st.none(), st.floats(allow_nan=True)), max_size=40),
    st.sampled_from([("x",), None]),
    st.sampled_from([0, 1, 8, 256]),
)


@settings(max_examples=40, deadline=None)
@given(part=PARTS)
def test_a_partial_packs_and_unpacks_exactly(part):
    text = pack_partial(part)
    assert unpack_partial(text, part.schema, part.columns, part.key, part.n_buckets) == part
    # only the buckets holding a row are written: 8 bytes per number, 4 numbers each
    used = sum(1 for c, _, _ in (merge([part]).finish().buckets.rows() if part.n_buckets else []) if c)
    assert len(base64.b64decode(text)) == 8 * (3 + 4 + 4 * used)


def _words(part) -> np.ndarray:
    return np.frombuffer(base64.b64decode(pack_partial(part)), dtype=">u8").copy()


def _text(words: np.ndarray) -> str:
    return base64.b64encode(words.astype(">u8").tobytes()).decode()


def _refused(words_or_text, part) -> bool:
    text = words_or_text if isinstance(words_or_text, str) else _text(words_or_text)
    return unpack_partial(text, part.schema, part.columns, part.key, part.n_buckets) is None


def test_partials_inconsistent_in_themselves_are_refused():
    part = _part([1.0, 2.0, 3.0, None, float("nan")], buckets=8)
    words = _words(part)
    assert not _refused(words, part)
    buckets = words[7:].reshape(-1, 4)
    assert len(buckets) >= 2
    cases = {
        "not base64": "@@",
        "cut mid-word": _text(words)[:-4],
        "a bucket cut off": _text(words[:-4]),
        "more nulls than rows": _with(words, 3, 6),
        "a NaN count past the rows": _with(words, 4, 5),
        "an index out of range": _with(words, len(words) - 4, 8),  # the last, so still in order
        "indices out of order": _text(np.concatenate([words[:7], buckets[::-1].ravel()])),
        "a bucket of no rows": _with(words, 8, 0),
        "an extra bucket of no rows, totals kept": _with_empty_bucket(words),
        "bucket counts off the rows": _with(words, 0, int(words[0]) + 1),
        "bucket sums off the sums": _with(words, 1, int(words[1]) ^ 1),
    }
    for why, text in cases.items():
        assert _refused(text, part), why


def _with_empty_bucket(words: np.ndarray) -> str:
    """The partial with one more bucket, of no rows and zero sums, at an index no bucket has, in index order."""
    buckets = words[7:].reshape(-1, 4)
    free = min(set(range(8)) - {int(i) for i in buckets[:, 0]})
    quads = sorted([*map(tuple, buckets.tolist()), (free, 0, 0, 0)])
    return _text(np.concatenate([words[:7], np.array(quads, dtype=np.uint64).ravel()]))


def _with(words: np.ndarray, at: int, value: int) -> str:
    changed = words.copy()
    changed[at] = value
    return _text(changed)


def test_nans_in_a_column_that_has_none_are_refused():
    part = profile_sums(pa.table({"x": ["a", None]}), buckets=0)
    words = _words(part)
    assert not _refused(words, part)
    words[4] = 1  # a string column's NaN count
    assert _refused(words, part)


def test_a_partial_of_another_profile_is_never_written():
    profiles = _profiles()
    wrong = dict(profiles.files)
    wrong["c.parquet"] = ((1, 1, None), _part([1.0], key=None, buckets=8))
    bad = FileProfiles(TABLE, "table-id", "spark", profiles.schema, 1, ("x",), 8, wrong)
    with pytest.raises(ValueError, match=r"the profile partial of c\.parquet is of"):
        profiles_document(bad)


def test_a_document_of_another_table_is_refused(tmp_path):
    cache = FileSumsCache(tmp_path)
    cache.save_profiles(_profiles())
    [doc] = Path(cache.where_profiles(TABLE, "spark", ("x",), 8)).glob("*.json.gz")
    other = Path(cache.where_profiles("/data/other", "spark", ("x",), 8))
    other.mkdir(parents=True)
    (other / doc.name).write_bytes(doc.read_bytes())
    with pytest.raises(
        RecordError, match="cached profiles of table '/data/sales', not '/data/other': not this table's"
    ):
        cache.load_profiles("/data/other", "spark", ("x",), 8)


def _many(count: int, table: str = TABLE, version: int = 1, skip: int = -1) -> FileProfiles:
    """``count`` files of distinct partials (file ``skip`` left out)."""
    files = {
        f"part-{i:04d}.parquet": ((100 + i, 7, None), _part([float(i), float(i) / 3, None]))
        for i in range(count)
        if i != skip
    }
    first = next(iter(files.values()))[1]
    return FileProfiles(table, "table-id", "spark", first.schema, version, ("x",), 8, files)


def _part_names(cache: FileSumsCache) -> set[str]:
    return {p.name for p in (Path(cache.where_profiles(TABLE, "spark", ("x",), 8)) / "parts").glob("*.json.gz")}


@pytest.mark.parametrize("root", ["local", "memory"])
def test_a_big_table_keeps_its_partials_in_parts_and_a_new_file_rewrites_one(tmp_path, root, monkeypatch):
    import ubunye.lineage.file_profiles as file_profiles

    monkeypatch.setattr(file_profiles, "PART_BYTES", 4_000)  # 45 files of ~0.2 KB each: 8 parts, for 44 too
    cache = FileSumsCache(tmp_path if root == "local" else f"memory://file-profiles-{uuid.uuid4().hex}/records")
    before = _many(45, skip=44)
    document, parts = file_profiles.profiles_objects(before)
    assert len(parts) >= 4
    assert len(file_profiles.profiles_document(before)) > len(document)  # the files are in the parts
    cache.save_profiles(before)
    assert cache.load_profiles(TABLE, "spark", ("x",), 8) == before
    after = _many(45)
    cache.save_profiles(after)
    assert cache.load_profiles(TABLE, "spark", ("x",), 8) == after
    _, new_parts = file_profiles.profiles_objects(after)
    assert len(set(new_parts) - set(parts)) == 1  # the one part that holds the new file
    if root == "local":
        # the part it replaced is kept while a save running at the same time may still be reusing it
        assert _part_names(cache) == set(new_parts) | set(parts)
        _age_parts(cache)
        cache.save_profiles(after)  # a later save: the replaced part, idle past the grace, is deleted
        assert _part_names(cache) == set(new_parts)
    small = _many(3)
    cache.save_profiles(small)  # small again: inline, and no part is left once they are idle
    assert cache.load_profiles(TABLE, "spark", ("x",), 8) == small
    if root == "local":
        _age_parts(cache)
        cache.save_profiles(small)
        assert _part_names(cache) == set()


def _age_parts(cache: FileSumsCache) -> None:
    """Every part dated as if file_sums._PART_GRACE had passed since it was last written or reused."""
    import os

    from ubunye.lineage import file_sums

    for p in (Path(cache.where_profiles(TABLE, "spark", ("x",), 8)) / "parts").glob("*.json.gz"):
        old = p.stat().st_mtime - file_sums._PART_GRACE - 1
        os.utime(p, (old, old))


def test_a_part_changed_missing_or_of_another_document_is_refused_naming_it(tmp_path, monkeypatch):
    import ubunye.lineage.file_profiles as file_profiles

    monkeypatch.setattr(file_profiles, "PART_BYTES", 4_000)
    cache = FileSumsCache(tmp_path)
    cache.save_profiles(_many(60))
    folder = Path(cache.where_profiles(TABLE, "spark", ("x",), 8)) / "parts"
    victim = sorted(folder.glob("*.json.gz"))[0]
    good = victim.read_bytes()
    victim.write_bytes(good[:-8] + bytes(8))  # the same name, other bytes
    with pytest.raises(RecordError, match=rf"{victim.name}: corrupt cached profiles \(its bytes are not the ones"):
        cache.load_profiles(TABLE, "spark", ("x",), 8)
    victim.unlink()
    with pytest.raises(RecordError, match=rf"{victim.name}: cannot read cached sums"):
        cache.load_profiles(TABLE, "spark", ("x",), 8)
    victim.write_bytes(good)
    assert cache.load_profiles(TABLE, "spark", ("x",), 8) == _many(60)
    # A document naming parts is refused where no part can be read.
    document, _ = file_profiles.profiles_objects(_many(60))
    with pytest.raises(RecordError, match="parts: a list, with no files beside"):
        file_profiles.parse_profiles(document, "doc", TABLE, "spark", ("x",), 8, None)


def test_an_incremental_profile_from_parts_equals_a_full_one(tmp_path, monkeypatch):
    from deltalake import DeltaTable, write_deltalake

    import ubunye.lineage.file_profiles as file_profiles
    from ubunye.hashing.delta_hash import hash_delta
    from ubunye.hashing.profile import profile_frame

    monkeypatch.setattr(file_profiles, "PART_BYTES", 20_000)  # 40 files of 16 filled buckets: several parts
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    for i in range(40):
        write_deltalake(path, pa.table({"x": np.arange(i * 50, i * 50 + 50), "s": [f"v{i}"] * 50}), mode="append")
    options = {"profile": True, "key": ["x"], "buckets": 16}
    hash_delta(path, cache=cache, **options)
    assert len(list((Path(cache.where_profiles(path, "deltalake", ("x",), 16)) / "parts").glob("*"))) > 1
    write_deltalake(path, pa.table({"x": np.arange(5000, 5050), "s": ["new"] * 50}), mode="append")
    got = hash_delta(path, cache=cache, **options)
    assert (got.hash_mode, got.files_read) == ("incremental", 1)
    assert got.profile == profile_frame(DeltaTable(path).to_pyarrow_table(), key=["x"], buckets=16)
