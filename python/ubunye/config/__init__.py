"""Load a task's config.yaml: YAML, then Jinja over string values, then validation naming file and key.

Example:
    >>> from ubunye.config import load_config
    >>> # load_config("examples/shop/daily/orders/config.yaml", dt="2026-12-01").backend
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml

from ubunye.config.model import IOConfig, MonitorConfig, TaskConfig, build
from ubunye.config.template import render_tree, template_variables
from ubunye.exceptions import ConfigError

CONFIG_FILE = "config.yaml"


def load_config(
    path: str | Path,
    dt: str | None = None,
    dtf: str | None = None,
    mode: str | None = None,
    env: Mapping[str, str] | None = None,
) -> TaskConfig:
    """Read, render and validate one config.yaml (a task folder is accepted too).

    Raises:
        ConfigError: the file is missing or not YAML, a template variable is undefined, or a key is unknown or
            invalid. The message starts with the file's path and names the key.
    """
    path = Path(path)
    if path.is_dir():
        path = path / CONFIG_FILE
    if not path.is_file():
        msg = f"{path}: no such config file"
        raise ConfigError(msg)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        msg = f"{path}: not valid YAML: {exc}"
        raise ConfigError(msg) from exc
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        msg = f"{path}: expected a mapping at the top (MODEL, VERSION, ENGINE, CONFIG)"
        raise ConfigError(msg)
    rendered = render_tree(doc, template_variables(dt, dtf, mode, env), str(path) + ":")
    return build(path, rendered, mode)


__all__ = ["CONFIG_FILE", "ConfigError", "IOConfig", "MonitorConfig", "TaskConfig", "load_config"]
