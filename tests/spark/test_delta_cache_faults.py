"""Incremental Delta hashes on Spark under hostile inputs: partition values deltalake and Spark's Delta reader
read differently, special characters in partition values and table paths. Always the hash of
``spark.read.format("delta")`` at that version."""

from __future__ import annotations

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from ubunye.hashing.delta_hash import hash_delta
from ubunye.hashing.spark import hash_spark, profile_spark
from ubunye.lineage.file_sums import FileSumsCache

#: Partition values that need escaping in a folder name, or that Spark's parquet() would take for a glob.
ODD = ["a b", "x%y", "k=v", "ü", "a/b", "{x}", "[a]", "*", "?", "a,b}", "#", "\\", "^", "%25", "a\tb"]


def _full(spark, path):
    return hash_spark(spark.read.format("delta").load(path))


def test_an_empty_string_partition_written_by_deltalake_is_never_rebuilt_as_null(spark, tmp_path):
    # The log holds "p": "" for the first file, null for the second; deltalake parses both as null, Spark's Delta
    # reader gives the first "". A file read alone had its partition rebuilt as null: a wrong incremental hash.
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    write_deltalake(path, pa.table({"id": [0], "p": ["a"]}), partition_by=["p"])
    assert hash_delta(path, cache=cache, spark=spark).hash == _full(spark, path)
    for i, value in enumerate(["", None, "b"], start=1):
        write_deltalake(path, pa.table({"id": [i], "p": pa.array([value], pa.string())}), mode="append",
                        partition_by=["p"])  # fmt: skip
        got = hash_delta(path, cache=cache, spark=spark)
        assert got.hash == _full(spark, path), value
        assert got.hash_mode == "full" and "empty string" in (got.reason or "")
        profiled = hash_delta(path, cache=cache, spark=spark, profile=True, key=["p"], buckets=4)
        full = profile_spark(spark.read.format("delta").load(path), key=["p"], buckets=4)
        assert profiled.profile is not None and profiled.profile.hash == full.hash
        assert profiled.profile.buckets == full.buckets
    assert "" in {r["p"] for r in spark.read.format("delta").load(path).collect()}  # what made the difference


@pytest.mark.parametrize("writer", ["deltalake", "spark"])
def test_odd_partition_values_and_table_paths_hash_incrementally(spark, tmp_path, writer):
    base = tmp_path / "ü b #"  # the table path has a space, unicode and a "#"
    path, cache = str(base / "t ä"), FileSumsCache(base / "rec ö")
    for i, value in enumerate([*ODD, None]):
        if writer == "deltalake":
            write_deltalake(path, pa.table({"id": [i], "p": pa.array([value], pa.string())}), mode="append",
                            partition_by=["p"])  # fmt: skip
        else:
            frame = spark.createDataFrame([(i, value)], "id bigint, p string")
            frame.write.format("delta").mode("append").partitionBy("p").save(path)
        got = hash_delta(path, cache=cache, spark=spark)
        assert got.hash == _full(spark, path), value
    assert got.files_reused == len(ODD)  # the last step read one file


def test_a_table_path_with_glob_characters_hashes_as_spark_reads_it(spark, tmp_path):
    # Spark expands "[x]" and "{x}" in a path given to parquet(): such a table is read through the Delta reader.
    path, cache = str(tmp_path / "a[x]{y}" / "t"), FileSumsCache(tmp_path / "records")
    for i in range(3):
        spark.createDataFrame([(i, "a")], "id bigint, p string").write.format("delta").mode("append").save(path)
        got = hash_delta(path, cache=cache, spark=spark)
        assert got.hash == _full(spark, path)


def test_cached_sums_of_a_file_with_a_deletion_vector_counting_other_rows_are_not_reused(spark, tmp_path):
    # A document whose checksum matches (anyone can compute it) but whose count for a file with a deletion vector
    # is not the log's numRecords less the deleted rows: those sums are not this file's; it is read again.
    import gzip
    import json
    from pathlib import Path

    from ubunye.lineage import file_sums

    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    frame = spark.createDataFrame([(i, f"n{i}") for i in range(40)], "id bigint, name string")
    frame.coalesce(1).write.format("delta").option("delta.enableDeletionVectors", "true").save(path)
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id % 7 = 0")
    assert hash_delta(path, cache=cache, spark=spark).hash == _full(spark, path)
    [doc] = Path(cache.where(str(Path(path).resolve()), "spark")).glob("*.json.gz")
    body = json.loads(gzip.decompress(doc.read_bytes()))
    body.pop("checksum")
    [entry] = body.pop("files")
    assert entry[3] is not None  # the file's deletion vector is part of its identity
    entry[4] += 1  # one row more than the file has left
    body["files"] = [entry]
    body["checksum"] = file_sums.checksum(body)
    doc.write_bytes(gzip.compress(json.dumps(body).encode()))
    got = hash_delta(path, cache=cache, spark=spark)
    assert got.hash == _full(spark, path)
    assert (got.files_reused, got.files_read) == (0, 1), got
