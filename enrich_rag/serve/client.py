"""A warm CLI: `enrich-rag query` asks a running server instead of loading the models again.

`enrich-rag serve` advertises itself in `<paths.root>/server.json` (its URL and process id) while it
runs; a query finds it there (or is given `--server URL`), and sends the write token when the
question may enrich. Plain urllib: the client needs nothing the core install lacks.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from enrich_rag.agent.stream import ERROR
from enrich_rag.errors import EnrichRagError
from enrich_rag.serve.access import TOKEN_FILE
from enrich_rag.storage.atomic import atomic_file

SERVER_FILE = "server.json"
PROBE_S = 1.0


def advertise(root: Path | str, url: str) -> Path:
    path = Path(root) / SERVER_FILE
    with atomic_file(path) as tmp:
        tmp.write_text(json.dumps({"url": url, "pid": os.getpid()}), encoding="utf-8")
    return path


def withdraw(root: Path | str) -> None:
    path = Path(root) / SERVER_FILE
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def _opened(url: str, body: dict[str, Any] | None, token: str | None, timeout: float) -> Iterator[Any]:
    """The server's response; its error reply (or none at all) as one line naming the server."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {token}"} if token else {})
    request = urllib.request.Request(url, data=data, headers=headers, method="GET" if body is None else "POST")
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("error", exc.reason)
        except ValueError:
            message = exc.reason
        raise EnrichRagError(f"server at {url.split('/api/')[0]}: {exc.code} {message}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise EnrichRagError(f"no server answering at {url.split('/api/')[0]} ({getattr(exc, 'reason', exc)})") from None
    with response:
        yield response


def _request(url: str, body: dict[str, Any] | None, token: str | None, timeout: float) -> dict[str, Any]:
    with _opened(url, body, token, timeout=timeout) as response:
        return json.loads(response.read())


def find_server(root: Path | str) -> str | None:
    """The URL of a live server over this data folder, or None."""
    try:
        advert = json.loads((Path(root) / SERVER_FILE).read_text(encoding="utf-8"))
        url, pid = str(advert["url"]), int(advert["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not _alive(pid):
        return None
    try:
        _request(f"{url}/api/health", body=None, token=None, timeout=PROBE_S)
    except EnrichRagError:
        return None
    return url


def read_token(root: Path | str) -> str | None:
    try:
        return (Path(root) / TOKEN_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def ask(
    url: str, question: str, allow_enrich: bool | None, token: str | None, timeout_s: float, abstain: bool | None = None
) -> Iterator[dict[str, Any]]:
    """One question through the server, as the events it streams (`agent/stream.py`); enrichment only
    with the token (without it the server reads only). `None`: what the server's settings say. An
    error event is raised as one line."""
    enrich = False if token is None else allow_enrich
    body = {"question": question, "allow_enrich": enrich, "abstain": abstain, "stream": True}
    with _opened(f"{url.rstrip('/')}/api/query", body, token, timeout=timeout_s) as response:
        for line in response:
            if not line.startswith(b"data: "):
                continue
            event = json.loads(line[len(b"data: ") :])
            if event["event"] == ERROR:
                raise EnrichRagError(f"server at {url}: {event['error']}")
            yield event
