"""Tests of config.yaml loading: strict YAML, templates, validation naming file and key."""
