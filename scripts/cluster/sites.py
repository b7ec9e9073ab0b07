"""The fixture web sites of the ``site`` machine: several hosts, each on its own address, with
links between them, one with a ``Crawl-delay`` in its robots.txt; and their request log.

Run on the site machine as ``python -m scripts.cluster.sites LOG HOSTS_JSON``: one HTTP server
per host on ``<address>:80`` (threads), each request appended at once to ``LOG`` as a JSON line
``{"t": wall-clock time, "host", "client": the requesting machine's address, "path", "ua",
"status"}``; SIGTERM stops it. The site's own log is what the politeness check reads.

Every page carries a word of its own and its host's word (``host_word``), found on no other
host, so that a search for a host's word finds that host's pages only.
"""

from __future__ import annotations

import http.server
import json
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass
from html import escape

from indexer.core.urls import server_of_host
from tests.fixtures.sites import unique_word

NAMES = ("alpha", "beta", "gamma", "delta")
PAGES = {"alpha": 60, "beta": 60, "gamma": 60, "delta": 40}
DELAYED = "delta"           # the host whose robots.txt asks for a Crawl-delay
CRAWL_DELAY = 0.5


@dataclass(frozen=True)
class Host:
    name: str
    address: str
    pages: int
    crawl_delay: float
    shard: int              # the queue server that owns it (hash of the address)

    @property
    def base(self) -> str:
        return f"http://{self.address}/"

    @property
    def word(self) -> str:
        return host_word(self.name)


def host_word(name: str) -> str:
    return unique_word("cluster host", name)


def choose_hosts(shards: int, subnet: str = "198.18.1.") -> list[Host]:
    """The hosts, on addresses of ``subnet`` picked so that every queue server owns the same
    number of them (hosts are sharded by a hash of their name, here the address)."""
    per_shard = len(NAMES) // shards
    picked: dict[int, list[str]] = {s: [] for s in range(shards)}
    for last in range(1, 255):
        address = f"{subnet}{last}"
        shard = server_of_host(address, shards)
        if len(picked[shard]) < per_shard:
            picked[shard].append(address)
        if all(len(v) == per_shard for v in picked.values()):
            break
    # interleave the shards, so that the delayed host is not always on the same one
    order = [a for group in zip(*picked.values(), strict=True) for a in group]
    return [Host(name, address, PAGES[name], CRAWL_DELAY if name == DELAYED else 0.0,
                 server_of_host(address, shards)) for name, address in zip(NAMES, order,
                                                                          strict=True)]


def page_links(hosts: list[Host], h: int, i: int) -> list[str]:
    """Links of page ``i`` of host ``h``: two on its own host (the next page keeps every page
    reachable), one to another host."""
    host, other = hosts[h], hosts[(h + 1 + i % (len(hosts) - 1)) % len(hosts)]
    return [f"/p/{(i + 1) % host.pages}.html", f"/p/{(i * 7 + 3) % host.pages}.html",
            f"{other.base}p/{(i * 5) % other.pages}.html"]


def page_body(hosts: list[Host], h: int, path: str) -> bytes | None:
    host = hosts[h]
    if path == "/":
        title, links = f"{host.name} home", ["/p/0.html", "/p/1.html"] + [
            o.base for o in hosts if o is not host]
    elif path.startswith("/p/") and path.endswith(".html") and path[3:-5].isdigit() \
            and int(path[3:-5]) < host.pages:
        i = int(path[3:-5])
        title, links = f"{host.name} page {i}", page_links(hosts, h, i)
    else:
        return None
    text = f"{host.name} {host.word} {unique_word('cluster page', host.name, path)} common words"
    anchors = "".join(f'<li><a href="{escape(u)}">{escape(u)}</a></li>' for u in links)
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
            f"{escape(title)}</title></head><body><h1>{escape(title)}</h1><p>{escape(text)}</p>"
            f"<ul>{anchors}</ul></body></html>").encode()


def robots_txt(host: Host) -> bytes:
    lines = ["User-agent: *", "Disallow: /private/"]
    if host.crawl_delay:
        lines.append(f"Crawl-delay: {host.crawl_delay:g}")
    return ("\n".join(lines) + "\n").encode()


def site_urls(hosts: list[Host]) -> set[str]:
    """Every url a crawl from the hosts' roots can reach (the expected crawl)."""
    urls = set()
    for host in hosts:
        urls.add(host.base)
        urls.update(f"{host.base}p/{i}.html" for i in range(host.pages))
    return urls


def serve(log_path: str, hosts: list[Host]) -> None:
    lock = threading.Lock()
    log = open(log_path, "a", buffering=1)

    def handler_for(h: int) -> type[http.server.BaseHTTPRequestHandler]:
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                started = time.time()
                if self.path == "/robots.txt":
                    status, body, kind = 200, robots_txt(hosts[h]), "text/plain"
                else:
                    body = page_body(hosts, h, self.path)
                    status, kind = (200, "text/html") if body else (404, "text/html")
                    body = body or b"<html><body>not found</body></html>"
                self.send_response(status)
                self.send_header("Content-Type", f"{kind}; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                entry = {"t": started, "host": hosts[h].name, "client": self.client_address[0],
                         "path": self.path, "ua": self.headers.get("User-Agent", ""),
                         "status": status}
                with lock:
                    log.write(json.dumps(entry) + "\n")

        return Handler

    servers = []
    for h, host in enumerate(hosts):
        server = http.server.ThreadingHTTPServer((host.address, 80), handler_for(h))
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print("sites up:", ", ".join(f"{h.name}={h.base}" for h in hosts), flush=True)
    stop.wait()
    for server in servers:
        server.shutdown()


def hosts_to_json(hosts: list[Host]) -> str:
    return json.dumps([asdict(h) for h in hosts])


def main() -> None:
    serve(sys.argv[1], [Host(**h) for h in json.loads(sys.argv[2])])


if __name__ == "__main__":
    main()
