"""Shared fixtures. Spark tests use the one session-scoped `spark` fixture (see tests/spark/conftest.py)."""

from __future__ import annotations

from pathlib import Path

from ubunye.testing.vectors import load_vectors

ROOT = Path(__file__).resolve().parent.parent
VECTOR_DIR = ROOT / "tests" / "vectors"
VECTORS = load_vectors(VECTOR_DIR)
