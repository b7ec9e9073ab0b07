"""Redis urls: the one place that reads ``REDIS_URL`` apart and writes the urls made from it.

Layer: ``operations`` (plain Python, no Django, no Redis client). ``REDIS_URL`` is in redis-py's
form (what ``redis.Redis.from_url`` and Django's ``RedisCache`` read), in one of three schemes:

* ``redis://[[user]:password@]host[:port][/db]`` (TCP) and ``rediss://...`` (TCP with TLS, its
  ``ssl_*`` parameters in the query);
* ``unix://[[user]:password@]/absolute/path.sock[?db=N]`` (a unix socket: the embedded Redis of
  ``manage.py up``, :func:`unix_socket_url`).

:func:`redis_url_for` derives from it the url of another database of the same server, and the
form Celery reads (kombu's broker transport and Celery's result backend), which for a unix
socket is ``redis+socket://[[user]:password@]/absolute/path.sock?virtual_host=N``: kombu knows
no ``unix`` transport, takes ``redis+socket`` as transport ``redis`` with the host
``socket://...`` (``kombu/connection.py``, the ``'+' in hostname`` branch), whose password it
reads from the url's user part and whose database from the query's ``virtual_host``
(``kombu/transport/redis.py``, ``Channel._connparams``: ``connparams.update(..., **query)``,
then ``connparams['password'] = password``, then ``_prepare_virtual_host(virtual_host)``);
Celery's result backend reads the same (``celery/backends/redis.py``,
``RedisBackend._params_from_url``: ``'db': query.pop('virtual_host')``, the socket path when
the scheme is ``socket``). A ``db`` or ``password`` in such a url's query would be overwritten
or ignored there, so they are moved where both read them. TCP urls are the same in both forms.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

# sun_path holds 108 bytes on Linux, the last one the terminating NUL
MAX_UNIX_SOCKET_PATH_BYTES = 107
TCP_SCHEMES = ("redis", "rediss")


class RedisUrlError(ValueError):
    """A Redis url this module cannot read: an unknown scheme, a bad database number, a unix
    socket url without an absolute path."""


def unix_socket_url(path: Path | str, password: str = "", db: int = 0) -> str:
    """The redis-py url of the Redis on the unix socket ``path`` (absolute), database ``db``,
    asking for ``password`` (none when empty)."""
    path = str(path)
    if not path.startswith("/"):
        raise RedisUrlError(f"a unix socket url needs an absolute path, got {path!r}")
    auth = f":{quote(password, safe='')}@" if password else ""
    return f"unix://{auth}{quote(path)}?db={int(db)}"


def unix_socket_path_too_long(path: Path | str) -> bool:
    """Whether ``path`` is longer than a unix socket's address can hold (a server cannot
    listen there, nor a client connect)."""
    return len(os.fsencode(str(path))) > MAX_UNIX_SOCKET_PATH_BYTES


def redis_url_for(url: str, *, db: int | None = None, celery: bool = False) -> str:
    """``url`` (redis-py's form, any of the module's schemes) pointed at database ``db`` (the
    url's own when None), in Celery's form when ``celery`` (for ``broker_url`` and
    ``result_backend``), else in redis-py's. Everything else in the url (password, TLS
    parameters, other query parameters) is kept. Raises :class:`RedisUrlError` for a url
    that is not one of the module's schemes."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    chosen = None if db is None else _database(str(db), url)
    if scheme in TCP_SCHEMES:
        return url if chosen is None else urlunsplit(parts._replace(path=f"/{chosen}"))
    if scheme != "unix":
        raise RedisUrlError("a Redis url is redis://, rediss:// or unix://, got "
                            f"{_shown(url)!r}")
    if parts.hostname or not parts.path.startswith("/"):
        raise RedisUrlError("a unix socket url is unix://[[user]:password@]/absolute/path"
                            f"[?db=N], got {_shown(url)!r}")
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    number = _database(query.pop("db", "0"), url) if chosen is None else chosen
    if not celery:  # built by hand: urlunsplit drops the // of an empty host
        return f"unix://{parts.netloc}{parts.path}?{urlencode({**query, 'db': number})}"
    asked_user, asked_password = query.pop("username", ""), query.pop("password", "")
    username = unquote(parts.username or "") or asked_user
    password = unquote(parts.password or "") or asked_password
    auth = quote(username, safe="")
    if password:
        auth += ":" + quote(password, safe="")
    netloc = f"{auth}@" if auth else ""
    return f"redis+socket://{netloc}{parts.path}?{urlencode({**query, 'virtual_host': number})}"


def _database(value: str, url: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise RedisUrlError(f"the database of a Redis url is a number, got {value!r} in "
                            f"{_shown(url)!r}") from None
    if number < 0:
        raise RedisUrlError(f"the database of a Redis url is 0 or more, got {number}")
    return number


def _shown(url: str) -> str:
    """``url`` with its password (in the user part or the query) masked, for messages."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if parts.password is not None:
            netloc = f"{parts.username or ''}:**@{netloc.rpartition('@')[2]}"
    except ValueError:
        return "(unreadable url)"
    query = "&".join(f"{k}=**" if k == "password" else f"{k}={quote(v)}"
                     for k, v in parse_qsl(parts.query, keep_blank_values=True))
    return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")
