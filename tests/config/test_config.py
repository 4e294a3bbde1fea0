"""config.yaml: defaults, validation naming file and key, templating."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from ubunye.config import load_config
from ubunye.exceptions import ConfigError

BASE = """
CONFIG:
  outputs:
    out: {format: parquet, path: "out/{{ dt | default('latest') }}"}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def test_defaults(tmp_path):
    cfg = load_config(write(tmp_path, BASE))
    assert (cfg.model, cfg.version, cfg.backend) == ("etl", "0.0.0-dev", "pandas")
    assert cfg.outputs["out"].mode == "overwrite"
    assert cfg.transform == {"type": "task"}


def test_omitted_dt_is_undefined_so_default_works(tmp_path):
    cfg = load_config(write(tmp_path, BASE))
    assert cfg.outputs["out"].path == "out/latest"
    assert "None" not in cfg.outputs["out"].path
    assert load_config(write(tmp_path, BASE), dt="2026-12-01").outputs["out"].path == "out/2026-12-01"


def test_bare_undefined_variable_is_an_error_naming_it(tmp_path):
    path = write(tmp_path, BASE.replace("{{ dt | default('latest') }}", "{{ dt }}"))
    with pytest.raises(ConfigError, match=r"config\.yaml.*CONFIG\.outputs\.out\.path.*'dt' is undefined"):
        load_config(path)


def test_env_and_mode_variables(tmp_path):
    path = write(tmp_path, BASE.replace("{{ dt | default('latest') }}", "{{ env.DATA_ROOT }}/{{ mode }}"))
    assert load_config(path, mode="prod", env={"DATA_ROOT": "/lake"}).outputs["out"].path == "out//lake/prod"
    with pytest.raises(ConfigError, match="DATA_ROOT"):
        load_config(path, mode="prod", env={})


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("COLOUR: red\n" + BASE, "COLOUR"),
        (BASE.replace("format: parquet", "format: parquet, colour: red"), "CONFIG.outputs.out.colour"),
        (BASE.replace("format: parquet", "format: avro"), "CONFIG.outputs.out.format"),
        (BASE.replace("format: parquet", "format: parquet, mode: upsert"), "CONFIG.outputs.out.mode"),
        ("ENGINE: {backend: flink}\n" + BASE, "ENGINE.backend"),
        ("ENGINE: {backend: spark, cores: 3}\n" + BASE, "ENGINE.cores"),
        ("MODEL: dl\n" + BASE, "MODEL"),
        (BASE + "  transform: {type: sql}\n", "CONFIG.transform.query"),
        (BASE + "  expectations: {nope: {not_null: [a]}}\n", "CONFIG.expectations.nope"),
        (BASE + "  expectations: {out: {no_nulls: [a]}}\n", "CONFIG.expectations.out.no_nulls"),
        (BASE + "  monitors: [{type: lineage, params: {colour: red}}]\n", "CONFIG.monitors[0].params.colour"),
        ("CONFIG: {}\n", "CONFIG.outputs"),
    ],
)
def test_invalid_configs_name_file_and_key(tmp_path, text, key):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(str(path))
    assert key in str(err.value)


@pytest.mark.parametrize("kind", ["folder", "fifo", "link to itself", "link to nothing"])
def test_a_config_that_is_no_regular_file_is_named_for_what_it_is(tmp_path, kind):
    # A folder, FIFO or link loop named config.yaml was "no such config file": the file is there, the message lied.
    task = tmp_path / "u" / "p" / "t"
    task.mkdir(parents=True)
    path = task / "config.yaml"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("config.yaml" if kind == "link to itself" else "gone.yaml")
    said = {
        "folder": "a folder, not a config file",
        "fifo": "not a regular file (a FIFO, socket or device): a config file must be one",
        "link to itself": "cannot read the config file (Too many levels of symbolic links)",
        "link to nothing": "no such config file (a link to nothing)",
    }[kind]
    with pytest.raises(ConfigError) as err:
        load_config(task)
    assert str(err.value) == f"{path}: {said}"


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, "CONFIG: [\n"))


def test_profiles_per_mode(tmp_path):
    text = "ENGINE:\n  backend: pandas\n  profiles:\n    prod: {backend: spark, spark_conf: {a.b: 1}}\n" + BASE
    assert load_config(write(tmp_path, text)).backend == "pandas"
    cfg = load_config(write(tmp_path, text), mode="prod")
    assert (cfg.backend, cfg.spark_conf) == ("spark", {"a.b": "1"})


def test_sample_fraction_is_accepted_with_a_deprecation_warning(tmp_path, caplog):
    text = BASE + "  monitors: [{type: lineage, params: {sample_fraction: 0.01}}]\n"
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        cfg = load_config(write(tmp_path, text))
    assert cfg.monitors[0].type == "lineage"
    assert "sample_fraction is deprecated" in caplog.text


def test_time_travel_only_on_delta_inputs(tmp_path):
    text = BASE + "  inputs:\n    x: {format: parquet, path: x, version: 1}\n"
    with pytest.raises(ConfigError, match="time travel"):
        load_config(write(tmp_path, text))
    text = BASE + "  inputs:\n    x: {format: delta, path: x, version: 1}\n"
    assert load_config(write(tmp_path, text)).inputs["x"].version == 1
