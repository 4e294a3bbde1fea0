"""Jinja templating of config values: ``dt``, ``dtf``, ``mode`` and ``env``, strictly."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import jinja2

from ubunye.exceptions import ConfigError


class _Env(Mapping[str, str]):
    """The process environment as a template variable; a missing name is an error naming it."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = dict(values)

    def __getitem__(self, key: str) -> str:
        if key not in self._values:
            msg = f"environment variable {key!r} is not set"
            raise jinja2.UndefinedError(msg)
        return self._values[key]

    def __getattr__(self, key: str) -> str:
        if key.startswith("_"):
            raise AttributeError(key)
        return self[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


_JINJA = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)


def template_variables(
    dt: str | None = None, dtf: str | None = None, mode: str | None = None, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The variables a config sees. An omitted ``dt``/``dtf``/``mode`` is *undefined*, not ``None``.

    So ``{{ dt | default('latest') }}`` renders ``latest`` when dt is omitted, and a bare ``{{ dt }}`` is an error.

    Example:
        >>> sorted(template_variables(dt="2026-12-01"))
        ['dt', 'env']
    """
    out: dict[str, Any] = {"env": _Env(os.environ if env is None else env)}
    for name, value in (("dt", dt), ("dtf", dtf), ("mode", mode)):
        if value is not None:
            out[name] = value
    return out


def render_value(text: str, variables: Mapping[str, Any], where: str) -> str:
    """Render one string; ``where`` ("config.yaml: CONFIG.inputs.x.path") goes into any error.

    Example:
        >>> render_value("in/{{ dt | default('latest') }}", template_variables(env={}), "x")
        'in/latest'
    """
    if "{" not in text:
        return text
    try:
        return _JINJA.from_string(text).render(**variables)
    except jinja2.UndefinedError as exc:
        msg = f"{where}: undefined template variable: {exc.message}"
        raise ConfigError(msg) from exc
    except jinja2.TemplateError as exc:
        msg = f"{where}: bad template {text!r}: {exc}"
        raise ConfigError(msg) from exc


def render_tree(node: Any, variables: Mapping[str, Any], where: str) -> Any:
    """Render every string value (never a key) inside nested dicts and lists."""
    if isinstance(node, str):
        return render_value(node, variables, where)
    if isinstance(node, dict):
        return {k: render_tree(v, variables, f"{where}.{k}") for k, v in node.items()}
    if isinstance(node, list):
        return [render_tree(v, variables, f"{where}[{i}]") for i, v in enumerate(node)]
    return node
