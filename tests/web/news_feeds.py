"""A loopback HTTP server of RSS and Atom feeds for the news source tests: each path's
answer (status, content type, body) can be changed while it runs, so a test adds an item to a
feed and watches the next update pick it up."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.utils import formatdate
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def rss(title: str, items: list[tuple[str, str, str, float]], lang: str = "en") -> bytes:
    """An RSS 2.0 feed of (title, link, description, published) items."""
    body = "".join(
        f"<item><title>{escape(t)}</title><link>{escape(link)}</link>"
        f"<description>{escape(d)}</description>"
        f"<pubDate>{formatdate(p, usegmt=True)}</pubDate></item>" for t, link, d, p in items)
    return (f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
            f"<title>{escape(title)}</title><language>{lang}</language>"
            f"<description>Test feed</description>{body}</channel></rss>").encode()


def atom(title: str, items: list[tuple[str, str, str, float]]) -> bytes:
    """An Atom feed of (title, link, summary, updated) entries."""
    def iso(t: float) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
    body = "".join(
        f'<entry><title>{escape(t)}</title><link rel="alternate" href="{escape(link)}"/>'
        f"<summary>{escape(d)}</summary><updated>{iso(p)}</updated></entry>"
        for t, link, d, p in items)
    return (f'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
            f"<title>{escape(title)}</title>{body}</feed>").encode()


class FeedServer:
    """``answers[path] = (status, content type, body)``; ``url(path)`` its address."""

    def __init__(self) -> None:
        self.answers: dict[str, tuple[int, str, bytes]] = {}
        self.hits: dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.hits[self.path] = server.hits.get(self.path, 0) + 1
                status, kind, body = server.answers.get(self.path, (404, "text/plain", b"no"))
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def serve(self, path: str, body: bytes, status: int = 200,
              kind: str = "application/rss+xml") -> str:
        self.answers[path] = (status, kind, body)
        return self.url(path)


@contextmanager
def feed_server() -> Iterator[FeedServer]:
    server = FeedServer()
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join(timeout=10)
