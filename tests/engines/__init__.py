"""Tests of the engines (pandas, polars, Spark): reads, writes, SQL and hashing of the same task on each."""
