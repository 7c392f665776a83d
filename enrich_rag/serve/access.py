"""Who may change what: reads are open on loopback, writes need the server's token, hosts are checked.

The token is made at the first start, stored beside the data with user-only permissions and printed
once; rollback, saved settings and enrichment need it (`Authorization: Bearer <token>`). The `Host`
header must name the address the server is bound to, so a web page in the user's own browser cannot
reach a loopback server through DNS rebinding. Bound to a non-loopback address, the server answers
nothing without the token.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the `serve` extra; `enrich-rag query` reads the token file without it
    from starlette.datastructures import Headers

TOKEN_FILE = "serve_token"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1", "[::1]")


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The Host header without its port ("[::1]:8000" -> "[::1]", "localhost:8000" -> "localhost")."""
    if header.startswith("["):
        return header[: header.find("]") + 1]
    return header.split(":")[0] if header.count(":") == 1 else header


def load_or_create_token(path: Path) -> tuple[str, bool]:
    """(token, created now). Created with mode 0600 in one step, never world-readable even briefly."""
    if path.is_file():
        return path.read_text(encoding="utf-8").strip(), False
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(24)
    tmp = path.with_name(f".tmp-{path.name}-{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    os.replace(tmp, path)
    return token, True


@dataclass(frozen=True)
class Access:
    token: str
    bound_host: str  # the address the server listens on
    allowed_hosts: tuple[str, ...] = ()  # extra Host names (a public name in front of a non-loopback bind)

    @property
    def reads_need_token(self) -> bool:
        return not is_loopback(self.bound_host)

    def host_allowed(self, host_header: str) -> bool:
        host = host_name(host_header)
        if self.reads_need_token and not self.allowed_hosts:
            return True  # bound to every address: no name to hold it to, and every request needs the token
        known = (
            {*LOOPBACK_NAMES, self.bound_host, *self.allowed_hosts}
            if is_loopback(self.bound_host)
            else {self.bound_host, *self.allowed_hosts}
        )
        return host in known

    def authorised(self, headers: Headers) -> bool:
        given = headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        return scheme.lower() == "bearer" and secrets.compare_digest(value.strip().encode(), self.token.encode())
