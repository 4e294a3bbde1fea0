"""Load a task's config.yaml: YAML, then Jinja over string values, then validation naming file and key.

Example (the example usecase's orders task, as shipped in ``ubunye.testing``; ``mode="prod"`` picks its profile):
    >>> from pathlib import Path
    >>> import ubunye.testing
    >>> from ubunye.config import load_config
    >>> orders = Path(ubunye.testing.__file__).parent / "data/examples/shop/daily/orders/config.yaml"
    >>> cfg = load_config(orders, dt="2026-12-01")
    >>> cfg.backend, cfg.transform["params"]["day"], sorted(cfg.outputs)
    ('pandas', '2026-12-01', ['orders'])
    >>> load_config(orders, dt="2026-12-01", mode="prod").backend
    'spark'
"""

from __future__ import annotations

import stat
from collections.abc import Mapping
from pathlib import Path

from ubunye.config.model import IOConfig, MonitorConfig, TaskConfig, build
from ubunye.config.template import render_tree, template_variables, used_env
from ubunye.config.yamlfile import read_yaml
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

    Config is data: strict YAML (no duplicate keys, bounded aliases, string keys, UTF-8), templates rendered in
    Jinja's sandbox, and every value type-checked, never coerced. ``TaskConfig.env_used`` lists the environment
    variables the templates read.

    Raises:
        ConfigError: the file is missing or not YAML, a template fails or is undefined or tries to reach Python
            internals, a template variable cannot build a path, or a key is unknown or invalid. The message starts
            with the file's path and names the key.
    """
    path = Path(path)
    if path.is_dir():
        path = path / CONFIG_FILE
    if not path.is_file():
        msg = f"{path}: {_not_a_file(path)}"
        raise ConfigError(msg)
    doc = read_yaml(path)
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        msg = f"{path}: expected a mapping at the top (MODEL, VERSION, ENGINE, CONFIG)"
        raise ConfigError(msg)
    variables = template_variables(dt, dtf, mode, env)
    rendered = render_tree(doc, variables, str(path))
    return build(path, rendered, mode, env_used=used_env(variables))


def _not_a_file(path: Path) -> str:
    """What ``path`` is, when it is no readable regular file: missing, a folder, a FIFO or device, a link loop."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "no such config file" if not path.is_symlink() else "no such config file (a link to nothing)"
    except OSError as exc:  # ELOOP: a link to itself; EACCES: a folder on the way cannot be searched
        return f"cannot read the config file ({exc.strerror or exc})"
    if stat.S_ISDIR(mode):
        return "a folder, not a config file"
    return "not a regular file (a FIFO, socket or device): a config file must be one"


__all__ = ["CONFIG_FILE", "ConfigError", "IOConfig", "MonitorConfig", "TaskConfig", "load_config"]
