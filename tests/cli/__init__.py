"""Tests of the ``ubunye`` command line: run, hash, lineage and version through Typer's CliRunner."""
