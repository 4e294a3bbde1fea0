"""Tests of run records: whole runs, the record and its store, and comparing records."""
