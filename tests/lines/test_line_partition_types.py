"""Partition folders typed as this line's Spark types them: the main suite's live comparison
(tests/spark/test_partition_types_spark.py), run again in the Spark-lines tier, where Spark 3.5 decodes a
folder's ``%`` escapes otherwise than Spark 4 and its parsers may differ."""

from __future__ import annotations

from tests.spark.test_partition_types_spark import (  # noqa: F401  (collected here with this tier's session)
    spark_reads,
    test_partition_layouts_read_or_refused_as_live_spark,
    test_partition_values_read_as_live_spark_reads_them,
)
