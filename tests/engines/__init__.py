"""Tests of issue 4: run records."""
