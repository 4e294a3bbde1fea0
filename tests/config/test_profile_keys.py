"""config.yaml's profile keys per dataset (docs/rows-v1.md section 12, docs/tasks-and-records.md): checked, never
coerced."""

from __future__ import annotations

from pathlib import Path

import pytest

from ubunye.config import load_config
from ubunye.exceptions import ConfigError


def _config(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text("CONFIG:\n  outputs:\n    out: {format: parquet, path: out" + extra + "}\n")
    return path


def test_defaults_profile_on_with_256_keyless_buckets(tmp_path):
    io = load_config(_config(tmp_path, "")).outputs["out"]
    assert (io.profile, io.key, io.buckets) == (True, [], 256)


@pytest.mark.parametrize(
    ("extra", "want"),
    [
        (", key: order_id", (True, ["order_id"], 256)),
        (", key: [day, region], buckets: 1024", (True, ["day", "region"], 1024)),
        (", buckets: 1", (True, [], 1)),
        (", buckets: 65536", (True, [], 65536)),
        (", buckets: 0", (True, [], 0)),
        (", profile: false", (False, [], 256)),
    ],
)
def test_accepted(tmp_path, extra, want):
    io = load_config(_config(tmp_path, extra)).outputs["out"]
    assert (io.profile, io.key, io.buckets) == want


@pytest.mark.parametrize(
    ("extra", "key", "words"),
    [
        (", buckets: 100", "CONFIG.outputs.out.buckets", "power of two"),
        (", buckets: 131072", "CONFIG.outputs.out.buckets", "power of two"),
        (", buckets: -4", "CONFIG.outputs.out.buckets", ">= 0"),
        (", buckets: '256'", "CONFIG.outputs.out.buckets", "integer"),
        (", buckets: true", "CONFIG.outputs.out.buckets", "integer"),
        (", buckets: 2.0", "CONFIG.outputs.out.buckets", "integer"),
        (", key: []", "CONFIG.outputs.out.key", "empty key"),
        (", key: [a, a]", "CONFIG.outputs.out.key", "twice"),
        (", key: [a, 1]", "CONFIG.outputs.out.key[1]", "string"),
        (", key: {a: 1}", "CONFIG.outputs.out.key", "list of column names"),
        (", key: a, buckets: 0", "CONFIG.outputs.out.key", "buckets > 0"),
        (", profile: 'no'", "CONFIG.outputs.out.profile", "boolean"),
        (", profile: false, key: a", "CONFIG.outputs.out", "profile: false"),
        (", profile: false, buckets: 16", "CONFIG.outputs.out", "profile: false"),
    ],
)
def test_refused_naming_file_and_key(tmp_path, extra, key, words):
    path = _config(tmp_path, extra)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    assert text.startswith(f"{path}: {key}"), text
    assert words in text, text
