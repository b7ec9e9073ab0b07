"""The two ways ``bench/relevance_eval.py`` measures the local web: as it is, and with the
back-of-book index pages hidden (issue 36).

The judged queries of ../shared/judgments/dev.tsv come from the sites' own back-of-book
indexes (Sphinx ``genindex``, PostgreSQL's ``bookindex.html``, the module indexes), and the
engine reads those pages' entries as anchor text of their targets. With the index pages
answering 404 a crawl cannot read that answer key, so the same queries measure ranking by
content. The local web's ``HIDE_INDEXES=1 sh setup.sh`` does that with one ``location`` line
per HTTPS server of the nginx config ``gen_config.py`` writes (../shared/localweb/README.md),
but switching the shared local web hides the index pages from every other crawl running on
the machine meanwhile (one did, in a test of the first version of this module: its crawl of
the local web "as it is" lost the index pages). So the hidden crawl gets a copy of its own:
:func:`hidden_web` starts a second nginx (our own process, stopped when the crawl ends, also
on SIGTERM) from the shared generated config with the hide line added after every HTTPS
server's root location (:func:`hide_config`), listening on ``127.0.1.N`` where the shared one
listens on ``127.0.0.N``, its pid, logs and temporary files under :data:`RUN`; the crawl
reaches it through ``FetchConfig.host_overrides`` (host name -> that address, instead of
/etc/hosts). Same pages, same certificate, same robots.txt and redirects; the shared local web
is never touched. Each mode's crawl is cached in its own folder (``-hidden``), so later runs
do not start the copy again.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

SHARED = Path(os.environ.get("SHARED_DIR", Path(__file__).resolve().parents[2] / "shared"))
LOCALWEB = SHARED / "localweb"
CONF = LOCALWEB / "build" / "nginx.conf"
CA_BUNDLE = LOCALWEB / "build" / "tls" / "cert.pem"
SHARED_RUN = "/tmp/localweb-eval"  # the shared local web's runtime folder, in its config
RUN = Path(os.environ.get("HIDDEN_WEB_RUN", "/tmp/yioopy-bench-hidden-web"))  # the copy's

MODES = ("as-is", "hidden")
# the cache folder suffix of each mode's crawl (the as-is crawl keeps the old name)
VARIANT = {"as-is": "", "hidden": "-hidden"}
# the line gen_config.py writes with HIDE_INDEXES=1, and our mark on it
HIDE_LINE = ("    location ~ /(genindex[^/]*|bookindex|py-modindex|modindex|np-modindex)\\.html$ "
             "{ return 404; }")
MARK = "  # yioopy-bench: HIDE_INDEXES"
_LISTEN = re.compile(r"^(\s*listen\s+)127\.0\.0\.(\d+):")
_SERVER_NAME = re.compile(r"^\s*server_name\s+(\S+);")
# gen_config.py puts the hide line right after each HTTPS server's root location
ANCHOR = "    location = / { try_files /index.html =404; }"
# index pages of the default tier that must answer 404 when hidden and 200 otherwise
PROBES = ("https://docs.python.org/3/genindex.html",
          "https://www.postgresql.org/docs/15/bookindex.html")
START_TIMEOUT = 20.0  # seconds for the copy to answer


def hide_config(text: str) -> str:
    """``text`` (a generated nginx.conf) with the hide line, marked, after every server's
    root location; unchanged where a hide line is there already (as setup.sh writes it)."""
    out = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        out.append(line)
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if line == ANCHOR and not following.startswith(HIDE_LINE):
            out.append(HIDE_LINE + MARK)
    return "\n".join(out)


def private_config(text: str) -> tuple[str, dict[str, str]]:
    """The hidden copy's nginx config from the shared generated ``text``: the index pages
    hidden (:func:`hide_config`), every ``listen 127.0.0.N`` moved to ``127.0.1.N``, the
    runtime paths under :data:`RUN`; and host name -> the copy's address of its HTTPS
    server."""
    out, hosts = [], {}
    address = ""
    for line in hide_config(text).replace(SHARED_RUN, str(RUN)).split("\n"):
        moved = _LISTEN.match(line)
        if moved:
            address = f"127.0.1.{moved.group(2)}"
            line = _LISTEN.sub(rf"\g<1>{address}:", line)
        named = _SERVER_NAME.match(line)
        if named and address:
            hosts[named.group(1)] = address
        out.append(line)
    return "\n".join(out), hosts


def probe_status(url: str, address: str | None = None) -> int:
    """The HTTP status of ``url`` (https) on the local web, or on the copy at ``address``
    (the url's host name still sent and checked against the certificate)."""
    host, _, path = url.removeprefix("https://").partition("/")
    context = ssl.create_default_context(cafile=str(CA_BUNDLE))
    connection = http.client.HTTPSConnection(host, 443, timeout=5, context=context)
    raw = socket.create_connection((address or socket.gethostbyname(host), 443), timeout=5)
    connection.sock = context.wrap_socket(raw, server_hostname=host)
    try:
        connection.request("GET", "/" + path, headers={"Host": host})
        return int(connection.getresponse().status)
    finally:
        connection.close()


def serving_indexes(hosts: dict[str, str] | None = None) -> bool:
    """True when the local web (or the copy whose addresses ``hosts`` gives) serves its
    index pages: every probe answers 200."""
    return all(probe_status(url, (hosts or {}).get(url.split("/")[2])) == 200
               for url in PROBES)


def _stop(pid_file: Path) -> None:
    """Stop the copy's nginx (our own process, by its pid file) and wait for it."""
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text().strip())
    os.kill(pid, signal.SIGQUIT)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGTERM)


@contextlib.contextmanager
def hidden_web() -> Iterator[dict[str, str]]:
    """A copy of the local web with its back-of-book index pages answering 404, for the time
    of the ``with`` block (see the module docstring): yields the ``host_overrides`` that
    reach it; stopped however the block ends."""
    RUN.mkdir(parents=True, exist_ok=True)
    pid_file = RUN / "nginx.pid"
    _stop(pid_file)  # a copy a killed run left behind
    text, hosts = private_config(CONF.read_text())
    conf = RUN / "nginx.conf"
    conf.write_text(text)
    previous = signal.getsignal(signal.SIGTERM)

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(f"signal {signum}: stopping the hidden copy of the local web")

    signal.signal(signal.SIGTERM, stop)
    try:
        subprocess.run(["nginx", "-t", "-q", "-c", str(conf)], check=True, capture_output=True)
        subprocess.run(["nginx", "-c", str(conf)], check=True, capture_output=True)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                seen = [probe_status(url, hosts[url.split("/")[2]]) for url in PROBES]
            except OSError:
                seen = []
            if seen and all(code == 404 for code in seen):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the hidden copy of the local web answers {seen}")
            time.sleep(0.2)
        yield hosts
    finally:
        _stop(pid_file)
        signal.signal(signal.SIGTERM, previous)


def check_as_is() -> None:
    """Exit with a clear message when the local web hides its index pages (set up with
    ``HIDE_INDEXES=1``): a crawl then is not one of the local web as it is."""
    if not serving_indexes():
        raise SystemExit("the local web does not serve its index pages (set up with "
                         "HIDE_INDEXES=1?): the as-is crawl needs `sh setup.sh` (see "
                         f"{LOCALWEB / 'README.md'})")
