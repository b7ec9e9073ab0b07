"""The two ways ``bench/relevance_eval.py`` measures the local web: as it is, and with the
back-of-book index pages hidden (issue 36).

The judged queries of ../shared/judgments/dev.tsv come from the sites' own back-of-book
indexes (Sphinx ``genindex``, PostgreSQL's ``bookindex.html``, the module indexes), and the
engine reads those pages' entries as anchor text of their targets. With the index pages
answering 404 a crawl cannot read that answer key, so the same queries measure ranking by
content. The local web's ``HIDE_INDEXES=1 sh setup.sh`` does that by one ``location`` line per
HTTPS server of the nginx config that ``gen_config.py`` writes
(../shared/localweb/README.md); rerunning setup.sh would also rewrite every host's root page
and, without ``--large``, drop the large tier's hosts that other users of the shared local
web may be crawling. So :func:`hidden_indexes` adds exactly that line to the generated
``build/nginx.conf`` (marked, so that only it is taken out again), has the running nginx
reload its config (a graceful ``nginx -s reload``: no request is refused meanwhile), checks
from outside that an index page now answers 404, and always puts the config back (``finally``,
and on SIGTERM too) and checks that the page answers 200 again. It is held only for the time
of a crawl (a crawl of the local web as it is holds it off: :func:`as_is`); each mode's crawl
is cached in its own folder (``-hidden``), so later runs do not
switch the local web again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

SHARED = Path(os.environ.get("SHARED_DIR", Path(__file__).resolve().parents[2] / "shared"))
LOCALWEB = SHARED / "localweb"
CONF = LOCALWEB / "build" / "nginx.conf"
CA_BUNDLE = LOCALWEB / "build" / "tls" / "cert.pem"
LOCK = Path("/tmp/yioopy-localweb-hide.lock")  # one switch at a time on this machine

MODES = ("as-is", "hidden")
# the cache folder suffix of each mode's crawl (the as-is crawl keeps the old name)
VARIANT = {"as-is": "", "hidden": "-hidden"}
# the line gen_config.py writes with HIDE_INDEXES=1, and our mark on it
HIDE_LINE = ("    location ~ /(genindex[^/]*|bookindex|py-modindex|modindex|np-modindex)\\.html$ "
             "{ return 404; }")
MARK = "  # yioopy-bench: HIDE_INDEXES"
# gen_config.py puts the hide line right after each HTTPS server's root location
ANCHOR = "    location = / { try_files /index.html =404; }"
# index pages of the default tier that must answer 404 when hidden and 200 otherwise
PROBES = ("https://docs.python.org/3/genindex.html",
          "https://www.postgresql.org/docs/15/bookindex.html")
SWITCH_TIMEOUT = 20.0  # seconds for nginx's new workers to serve the new config


def hide_config(text: str) -> str:
    """``text`` (a generated nginx.conf) with the hide line, marked, after every server's
    root location; unchanged where a hide line is there already (as setup.sh wrote it)."""
    out = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        out.append(line)
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if line == ANCHOR and not following.startswith(HIDE_LINE):
            out.append(HIDE_LINE + MARK)
    return "\n".join(out)


def unhide_config(text: str) -> str:
    """``text`` without the lines :func:`hide_config` added (setup.sh's own unmarked hide
    lines stay: the local web was set up hidden, and it is not ours to change that)."""
    return "\n".join(line for line in text.split("\n") if not line.endswith(MARK))


def probe_status(url: str) -> int:
    """The HTTP status of ``url`` on the local web (a fresh connection, the local web's CA)."""
    context = ssl.create_default_context(cafile=str(CA_BUNDLE))
    try:
        with urllib.request.urlopen(url, timeout=5, context=context) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def serving_indexes() -> bool:
    """True when the local web serves its index pages (every probe answers 200)."""
    return all(probe_status(url) == 200 for url in PROBES)


def _reload() -> None:
    """Test the config, then have the running nginx (its pid file is named in the config)
    reload it gracefully."""
    subprocess.run(["nginx", "-t", "-q", "-c", str(CONF)], check=True, capture_output=True)
    subprocess.run(["nginx", "-s", "reload", "-c", str(CONF)], check=True, capture_output=True)


def _wait_for(status: int) -> None:
    deadline = time.monotonic() + SWITCH_TIMEOUT
    while True:
        seen = [probe_status(url) for url in PROBES]
        if all(s == status for s in seen):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the local web's index pages answer {seen}, not {status}, "
                               f"{SWITCH_TIMEOUT:.0f}s after its config was reloaded")
        time.sleep(0.2)


def _write(text: str) -> None:
    tmp = CONF.with_suffix(".yioopy-tmp")
    tmp.write_text(text)
    os.replace(tmp, CONF)


@contextlib.contextmanager
def hidden_indexes() -> Iterator[None]:
    """The local web with its back-of-book index pages answering 404, for the time of the
    ``with`` block (see the module docstring); restored however the block ends."""
    LOCK.touch(exist_ok=True)
    with open(LOCK) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        previous = signal.getsignal(signal.SIGTERM)

        def stop(signum: int, frame: object) -> None:
            raise SystemExit(f"signal {signum}: restoring the local web's index pages")

        signal.signal(signal.SIGTERM, stop)
        original = CONF.read_text()
        was_serving = serving_indexes()
        try:
            _write(hide_config(original))
            _reload()
            _wait_for(404)
            yield
        finally:
            _write(unhide_config(CONF.read_text()))
            _reload()
            if was_serving:
                _wait_for(200)
            signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def as_is() -> Iterator[None]:
    """The local web as it is for the time of the ``with`` block: held against
    :func:`hidden_indexes` (a shared lock on the same file, so another run's hidden crawl
    waits for this crawl to end, and the other way round), after checking that the index
    pages are served. Exits with a clear message when they are not (the local web was set up
    with ``HIDE_INDEXES=1``): a crawl then is not one of the local web as it is."""
    LOCK.touch(exist_ok=True)
    with open(LOCK) as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        if not serving_indexes():
            raise SystemExit("the local web does not serve its index pages (set up with "
                             "HIDE_INDEXES=1?): the as-is crawl needs `sh setup.sh` (see "
                             f"{LOCALWEB / 'README.md'})")
        yield
