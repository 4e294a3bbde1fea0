"""Keep secrets out of records: credentials in URLs and password/token/secret/key entries are replaced.

Example:
    >>> redact_url("s3://AKIA:s3cr3t@bucket/x?sig=abc&part=1")
    's3://AKIA:***@bucket/x?sig=***&part=1'
    >>> redact_config({"path": "x", "options": {"password": "p", "user": "u"}})
    {'path': 'x', 'options': {'password': '***', 'user': 'u'}}
"""

from __future__ import annotations

import re
from typing import Any

MASK = "***"

_SECRET_NAME = re.compile(
    r"(pass(word|wd)?|pwd|token|secret|credential|private|(^|[_\-.])key$|(api|access|account|client|sas)[_\-.]?key|sig(nature)?$)",
    re.IGNORECASE,
)
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:@/\s]*)(?::(?P<pw>[^@/\s]*))?@")
_CONTAINER_SCHEMES = {"abfs", "abfss", "wasb", "wasbs"}
_QUERY_SECRET = re.compile(
    r"([?&;](?:[^=&;]*(?:password|passwd|pwd|token|secret|key|sig|signature|credential)[^=&;]*)=)([^&;#]*)",
    re.IGNORECASE,
)
_INLINE = re.compile(r"((?:password|passwd|pwd|token|secret|accountkey)\s*=\s*)([^;&\s]+)", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """True for keys such as ``password``, ``token``, ``aws_secret_access_key``, ``api_key``, ``key``."""
    return bool(_SECRET_NAME.search(name))


def redact_url(text: str) -> str:
    """Mask URL passwords anywhere in the text (an error message too), bare user tokens and secret query values."""

    def userinfo(m: re.Match[str]) -> str:
        if m.group("pw") is not None:
            return f"{m.group('scheme')}{m.group('user')}:{MASK}@"
        if not m.group("user") or m.group("scheme").lower().rstrip(":/") in _CONTAINER_SCHEMES:
            return m.group(0)  # abfss://container@account...: a container name, not a credential
        return f"{m.group('scheme')}{MASK}@"

    text = _USERINFO.sub(userinfo, text)
    text = _QUERY_SECRET.sub(lambda m: m.group(1) + MASK, text)
    return _INLINE.sub(lambda m: m.group(1) + MASK, text)


def redact_config(node: Any) -> Any:
    """A copy of a config tree with secret entries masked and URLs in strings redacted."""
    if isinstance(node, dict):
        return {k: MASK if is_secret_name(str(k)) and v is not None else redact_config(v) for k, v in node.items()}
    if isinstance(node, list):
        return [redact_config(v) for v in node]
    if isinstance(node, str):
        return redact_url(node)
    return node
