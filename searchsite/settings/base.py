"""Settings for the whole engine, read once from the environment (django-environ).

Every variable is documented, with its default, in ``.env.example``. Nothing else in the project
reads the environment: glue code reads ``django.conf.settings`` and turns what it needs into frozen
config objects for the ``core`` packages.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from pathlib import Path

import environ

from crawler.core.definition import schedules  # urls per schedule, schedule timeout
from operations.redis_urls import redis_url_for, unix_socket_url

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
# A .env file beside manage.py is read if present; real environment variables win over it.
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

VAR_DIRECTORY = Path(env.str("VAR_DIRECTORY", default=str(BASE_DIR / "var"))).resolve()
WORK_DIRECTORY = Path(env.str("WORK_DIRECTORY", default=str(VAR_DIRECTORY / "work"))).resolve()


def _kept_secret(name: str) -> str:
    """A secret generated once into ``VAR_DIRECTORY/<name>`` (mode 0600 from its creation) and
    read back from there afterwards. Processes starting at once agree on one value: each writes
    its candidate to a private temporary file and links it into place, and a process that
    finds the name taken reads the winner's."""
    path = VAR_DIRECTORY / name
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(48)
    tmp = path.with_name(f".{name}.{secrets.token_hex(8)}.tmp")
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as handle:
        handle.write(value)
    try:
        os.link(tmp, path)  # atomic, and never replaces a value another process made
    except FileExistsError:
        value = path.read_text().strip()
    finally:
        tmp.unlink()
    return value


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one generated once and kept in var/secret_key."""
    return env.str("SECRET_KEY", default="") or _kept_secret("secret_key")


SECRET_KEY = _secret_key()
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# --- HTTPS (production behind a TLS-terminating reverse proxy; see README "Production") --------
# Defaults suit the embedded local run on plain-http localhost: every one is off.
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=False)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=False)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
# True when the proxy sets X-Forwarded-Proto (and strips it from clients' requests): requests
# it received over https are then seen as secure.
if env.bool("SECURE_PROXY_SSL_HEADER", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Content-Security-Policy of the admin pages (searchsite.middleware.AdminContentSecurityPolicy).
ADMIN_CONTENT_SECURITY_POLICY = env.str(
    "ADMIN_CONTENT_SECURITY_POLICY",
    default="default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; object-src 'none'; base-uri 'self'; form-action 'self'; "
            "frame-ancestors 'none'",
)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "crawler",
    "classifiers",
    "indexer",
    "linkgraph",
    "querylog",
    "searchindex",
    "ranking",
    "operations",
    "searchsite",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # the reader's language: Django's language cookie (the search settings, the footer's
    # switch), else the browser's Accept-Language, else LANGUAGE_CODE
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "searchsite.middleware.AdminContentSecurityPolicy",
]

ROOT_URLCONF = "searchsite.urls"
WSGI_APPLICATION = "searchsite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
                "ranking.searchpage.context.site_look",
            ],
        },
    },
]

DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{VAR_DIRECTORY / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several processes (web, workers, queue servers) share one SQLite file: wait for locks
    # instead of failing, and let readers run beside the single writer.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 30, "transaction_mode": "IMMEDIATE",
         "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"}
    )
# Keep a web process's database connection between requests: the search page reads its
# options and logs its query on every request, and opening a connection (and, for SQLite,
# closing the last one, which checkpoints and removes the WAL file) cost more than the search.
DATABASES["default"].setdefault("CONN_MAX_AGE", 600)
DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en"
# The languages the search page is translated into (locale/<code>/LC_MESSAGES/django.po; the
# admin in these languages is Django's own translation): tests/web/test_translations.py checks
# that each catalog translates every message of the templates.
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("es", "Español"), ("fr", "Français")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIRECTORY / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Files Django's storages write (collectstatic's copies included) are private to the engine's
# user, as everything under VAR_DIRECTORY is (operations.private_files); Django's default
# would make them 0644 whatever the umask.
FILE_UPLOAD_PERMISSIONS = 0o600
FILE_UPLOAD_DIRECTORY_PERMISSIONS = 0o700
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve straight from the finders as well, so a fresh checkout works before collectstatic.
WHITENOISE_USE_FINDERS = True

# --- Processes and message passing -------------------------------------------------------------

# Unset REDIS_URL means "the embedded Redis that `manage.py up` starts" (operations.
# embedded_redis). It listens on this unix socket only, 0600 in the private folder var/redis (no
# TCP port: other local users cannot reach it), and asks for a password generated once into
# var/redis_password (0600); every process of this machine reads both from REDIS_URL.
# REDIS_URL is in redis-py's form (redis://, rediss:// or unix://); the urls Celery reads are
# derived from it (operations.redis_urls).
EMBEDDED_REDIS = not env.str("REDIS_URL", default="")
EMBEDDED_REDIS_SOCKET = VAR_DIRECTORY / "redis" / "redis.sock"
EMBEDDED_REDIS_PASSWORD = _kept_secret("redis_password") if EMBEDDED_REDIS else ""
REDIS_URL = env.str("REDIS_URL", default="") or unix_socket_url(
    EMBEDDED_REDIS_SOCKET, EMBEDDED_REDIS_PASSWORD, db=0)
NUM_QUEUE_SERVERS = env.int("NUM_QUEUE_SERVERS", default=1)
# The queue servers (numbers 0 .. NUM_QUEUE_SERVERS-1) that `manage.py up` runs on this machine,
# e.g. "1" on the second of two queue-server machines. Empty: all of them.
QUEUE_SERVERS_HERE = tuple(env.list("QUEUE_SERVERS_HERE", cast=int, default=[]))
# Fetcher processes `manage.py up` starts: one per core this process may use (at least 2), so
# page processing, most of a fetcher's work, keeps every core busy.
NUM_FETCHERS = env.int("NUM_FETCHERS", default=max(2, len(os.sched_getaffinity(0))
                                                   if hasattr(os, "sched_getaffinity")
                                                   else os.cpu_count() or 2))
# The secret machines of one engine show each other (shard API header, signed crawl messages).
# Unset: generated once into var/queue_server_token (0600): right for one machine; several
# machines must all be given the same value in the environment.
QUEUE_SERVER_TOKEN = env.str("QUEUE_SERVER_TOKEN", default="") or _kept_secret(
    "queue_server_token")
WEB_BIND = env.str("WEB_BIND", default="127.0.0.1:8000")
WEB_WORKERS = env.int("WEB_WORKERS", default=2)
# The web server's access log (one line a request): a file, by default under VAR_DIRECTORY, so
# that `manage.py up`'s console keeps the engine's own messages; "-" prints it on the console,
# "" keeps none.
WEB_ACCESS_LOG = env.str("WEB_ACCESS_LOG", default=str(VAR_DIRECTORY / "web-access.log"))
# Open connections per web worker (gunicorn's gevent worker): a slow client holds one
# connection, a greenlet, not a thread; past this a worker accepts no more until one closes.
WEB_WORKER_CONNECTIONS = env.int("WEB_WORKER_CONNECTIONS", default=1000)
# /metrics (Prometheus): with a token, only requests carrying it as a bearer token; without,
# only clients on a loopback address (behind a reverse proxy: everyone, so set it there).
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
# The agent API (issue 38: ranking.agent): the MCP server `manage.py up` starts (streamable HTTP
# at http://MCP_BIND/mcp; "" starts none; `manage.py run_mcp_server --stdio` serves one client
# on stdin/stdout) and the same tools as JSON under /api/agent/. Loopback clients are served;
# remote ones only with AGENT_TOKEN as a bearer token (unset: none); a request from a web page
# is refused unless its origin is listed in AGENT_ALLOWED_ORIGINS.
MCP_BIND = env.str("MCP_BIND", default="127.0.0.1:8765")
AGENT_TOKEN = env.str("AGENT_TOKEN", default="")
AGENT_ALLOWED_ORIGINS = tuple(env.list("AGENT_ALLOWED_ORIGINS", default=[]))
# "Is my site indexed?" (/indexed, issue 38): what a submitted url does: "review" waits for the
# operator's approval in the admin (Url submissions), "auto" joins the running crawl as a seed
# at once, "off" takes none (the page still tells a url's state). At most
# SUBMISSIONS_PER_CLIENT_PER_HOUR submissions and lookups from one client address an hour.
SUBMISSIONS = env.str("SUBMISSIONS", default="review")
if SUBMISSIONS not in ("review", "auto", "off"):
    raise ValueError("SUBMISSIONS must be review, auto or off")
SUBMISSIONS_PER_CLIENT_PER_HOUR = env.int("SUBMISSIONS_PER_CLIENT_PER_HOUR", default=30)

CELERY_BROKER_URL = redis_url_for(REDIS_URL, celery=True)  # a unix socket: redis+socket://
CELERY_RESULT_BACKEND = CELERY_BROKER_URL
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "fetch"
CELERY_RESULT_EXPIRES = 3600
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
# news sources (crawler.news.updates): Celery beat (a child of manage.py up) sends the update
# task this often; each source is read when its own interval has passed
NEWS_TICK_SECONDS = env.float("NEWS_TICK_SECONDS", default=60.0)
CELERY_BEAT_SCHEDULE = {
    "news-sources": {"task": "crawler.news_update", "schedule": NEWS_TICK_SECONDS,
                     "options": {"queue": "fetch", "expires": NEWS_TICK_SECONDS}},
}
# Signed crawl messages (schedules, batches) older than this many seconds are refused, and one
# already handled within it is refused as a replay (crawler.core.transport.shipping). It must be longer
# than any wait a legitimate message has in the broker: a redelivery comes after the
# visibility timeout above, and a queue server that was stopped finds its batches waiting.
ENVELOPE_MAX_AGE = env.float("ENVELOPE_MAX_AGE", default=86400.0)
if ENVELOPE_MAX_AGE <= CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]:
    raise ValueError("ENVELOPE_MAX_AGE must be longer than the broker's visibility timeout "
                     f"({CELERY_BROKER_TRANSPORT_OPTIONS['visibility_timeout']} s)")

# The default cache (admin login throttling, operations.login_throttle): the Redis of REDIS_URL
# when it is set, shared by every web process. Unset (the embedded local run), a per-process
# memory cache: each gunicorn worker then counts failed logins on its own, so an attacker gets
# up to WEB_WORKERS times LOGIN_THROTTLE_FAILURES tries per window. Set REDIS_URL in production.
if EMBEDDED_REDIS:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                          "LOCATION": "yioopy"}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                          "LOCATION": REDIS_URL, "KEY_PREFIX": "yioopy-cache"}}
# Admin login (operations.login_throttle): after this many failures of one username from one
# client address within the window (seconds, counted from the first failure), that username is
# refused from that address until the window ends; after LOGIN_THROTTLE_ADDRESS_FAILURES
# failures from one address (any usernames), every login from it is. Other addresses are not
# locked out. `manage.py unlock_login` clears them (with REDIS_URL set).
LOGIN_THROTTLE_FAILURES = env.int("LOGIN_THROTTLE_FAILURES", default=5)
LOGIN_THROTTLE_ADDRESS_FAILURES = env.int("LOGIN_THROTTLE_ADDRESS_FAILURES", default=20)
LOGIN_THROTTLE_WINDOW = env.int("LOGIN_THROTTLE_WINDOW", default=900)
# Behind a reverse proxy every request comes from the proxy's address: name the request header
# (Django META name, e.g. HTTP_X_FORWARDED_FOR) whose last entry the proxy sets to the client's.
# It is read only on requests whose peer is one of TRUSTED_PROXIES (addresses or CIDR
# networks, e.g. 127.0.0.1 for a proxy on this machine); from anyone else it is ignored
# (operations.client_address: /metrics, the login throttle and the query log read it).
LOGIN_CLIENT_ADDRESS_HEADER = env.str("LOGIN_CLIENT_ADDRESS_HEADER", default="")
TRUSTED_PROXIES = tuple(entry.strip() for entry in env.list("TRUSTED_PROXIES", default=[])
                        if entry.strip())
for _proxy in TRUSTED_PROXIES:
    ipaddress.ip_network(_proxy, strict=False)  # raises ValueError on a bad entry

# Query log (needy-query crawling reads it): rows kept this many days (0: forever), and at most
# this many rows a minute from one client address (0: no bound).
QUERY_LOG_RETENTION_DAYS = env.int("QUERY_LOG_RETENTION_DAYS", default=90)
QUERY_LOG_PER_CLIENT_PER_MINUTE = env.int("QUERY_LOG_PER_CLIENT_PER_MINUTE", default=30)

# Queue servers: this machine's url as the name server and the network iterator reach it.
QUEUE_SERVER_BASE_URL = env.str("QUEUE_SERVER_BASE_URL", default=f"http://{WEB_BIND}/")
DOWNLOAD_SIZE_INTERVAL = env.int("DOWNLOAD_SIZE_INTERVAL", default=schedules.DOWNLOAD_SIZE_INTERVAL)
QUEUE_SERVER_MAX_SCHEDULES = env.int("QUEUE_SERVER_MAX_SCHEDULES", default=4)
# Crawls that may be active (running or stopping) at once, each on its own channel with its
# own queue and index on every queue server; the queue servers share their fetchers between
# them (issue 37). Starting one more is refused with a message naming the active ones.
MAX_ACTIVE_CRAWLS = env.int("MAX_ACTIVE_CRAWLS", default=3)
# then handed out again
SCHEDULE_TIMEOUT = env.float("SCHEDULE_TIMEOUT", default=schedules.SCHEDULE_TIMEOUT)
# A fetcher claims the schedule it runs (crawler.machines.claim_store); its claim lapses this long after
# the fetcher stops refreshing it (it died). A schedule nobody claims this long after it was
# handed out (its message was lost, or its fetcher died) is handed out again, waiting twice as
# long each further time, at most SCHEDULE_TIMEOUT; one its fetcher gave back (the crawl
# stopped) is handed out again at once.
SCHEDULE_CLAIM_SECONDS = env.float("SCHEDULE_CLAIM_SECONDS", default=15.0)
SCHEDULE_UNCLAIMED_TIMEOUT = env.float("SCHEDULE_UNCLAIMED_TIMEOUT", default=60.0)
# Each fetcher process (every pool process of a `fetch` worker) reports that it is alive this
# often, idle or fetching (crawler.machines.presence); one silent for 3 of these is shown gone.
FETCHER_HEARTBEAT_SECONDS = env.float("FETCHER_HEARTBEAT_SECONDS", default=10.0)
INDEX_REFRESH_SECONDS = env.float("INDEX_REFRESH_SECONDS", default=10.0)
# How long a "day" of page recrawl (Page Options page_recrawl_days) and of a crawl's repeat
# (recrawl_days) is, in seconds. The options stay in days; a demonstration or a test of
# recrawls shortens the day instead of waiting for it.
RECRAWL_DAY_SECONDS = env.float("RECRAWL_DAY_SECONDS", default=86400.0)
# What a crawl did with its urls and hosts, for the admin (crawler.models.hosts): the newest
# HOST_LOG_FETCHED_KEEP fetched urls per crawl and HOST_LOG_REFUSED_KEEP refused urls per crawl
# and reason are kept, trimmed every HOST_LOG_TRIM_SECONDS; a queue server reads the operator's
# host overrides (slow down, exclude) every HOST_OVERRIDE_SECONDS.
HOST_LOG_FETCHED_KEEP = env.int("HOST_LOG_FETCHED_KEEP", default=1_000_000)
HOST_LOG_REFUSED_KEEP = env.int("HOST_LOG_REFUSED_KEEP", default=10_000)
HOST_LOG_TRIM_SECONDS = env.float("HOST_LOG_TRIM_SECONDS", default=60.0)
HOST_OVERRIDE_SECONDS = env.float("HOST_OVERRIDE_SECONDS", default=2.0)
# Disk watermarks of the work directory's filesystem (crawler.core.queue_server.disk_space): below
# DISK_PAUSE_FREE_BYTES free (or DISK_PAUSE_FREE_PERCENT of the filesystem, whichever is more) a
# queue server hands out no new schedules, so the crawl pauses; it resumes by itself once free
# space is back above DISK_RESUME_FREE_BYTES (or the percentage). 0 turns a mark off.
DISK_PAUSE_FREE_BYTES = env.int("DISK_PAUSE_FREE_BYTES", default=1024 ** 3)
DISK_RESUME_FREE_BYTES = env.int("DISK_RESUME_FREE_BYTES", default=2 * 1024 ** 3)
DISK_PAUSE_FREE_PERCENT = env.float("DISK_PAUSE_FREE_PERCENT", default=0.0)
DISK_RESUME_FREE_PERCENT = env.float("DISK_RESUME_FREE_PERCENT", default=0.0)
# A batch the inbox could not store (a full disk) stays in the broker and is tried again after
# 1, 2, 4... seconds, at most this many seconds apart.
INBOX_RETRY_SECONDS = env.float("INBOX_RETRY_SECONDS", default=30.0)
# Documents per index partition (pages and link documents; the seed's partitions hold "around
# 100,000" on an 8 GB machine). Within a partition and across finished ones, the index is
# re-ordered by importance after link analysis.
INDEX_PARTITION_DOCUMENTS = env.int("INDEX_PARTITION_DOCUMENTS", default=50_000)
# Link analysis (web graph, Loops, LinkRank, trust, scores) runs by itself when a crawl stops or
# finishes, and during a crawl after every this many newly fetched pages (0: only at the end).
LINK_ANALYSIS_EVERY_PAGES = env.int("LINK_ANALYSIS_EVERY_PAGES", default=5000)
# Run the optional Loops job (links on short cycles count for less in LinkRank).
LINK_ANALYSIS_LOOPS = env.bool("LINK_ANALYSIS_LOOPS", default=True)
# A run that has reported no progress for this long is taken to be dead (its worker was
# killed): the next request starts a new run instead of waiting for it.
LINK_ANALYSIS_STALE_SECONDS = env.float("LINK_ANALYSIS_STALE_SECONDS", default=900.0)
# Search Time Page Options, and the list of queue servers read over HTTP, are read from the
# database at most this often per web process (an admin's edit reaches every process within
# it; 0 reads them on every search).
SEARCH_OPTIONS_TTL = env.float("SEARCH_OPTIONS_TTL", default=5.0)
# Queue servers on other machines whose shards a search reads over HTTP: by default every live
# queue server that registered a url other than this machine's QUEUE_SERVER_BASE_URL; a list of
# base urls here is used instead.
SEARCH_REMOTE_QUEUE_SERVERS = tuple(env.list("SEARCH_REMOTE_QUEUE_SERVERS", default=[]))
# The semantic signal (docs/semantic.md; needs the `semantic` extra and `manage.py embed_index`):
# the weight of the embedding rank fused with the score's rank over the first
# SEMANTIC_DEPTH results. 0 (the default) is off: it lowered MRR@10 on the dev judgments.
SEMANTIC_WEIGHT = env.float("SEMANTIC_WEIGHT", default=0.0)
SEMANTIC_DEPTH = env.int("SEMANTIC_DEPTH", default=50)
# Where `manage.py fetch_semantic_model` puts the model's files (<dir>/<repository>/<revision>/),
# and the model: a ranking.core.semantic.model_files.ModelSpec named by its dotted path (the
# authors' files of all-MiniLM-L6-v2, pinned by revision and sha256).
SEMANTIC_MODEL_DIR = Path(env.str("SEMANTIC_MODEL_DIR",
                                  default=str(VAR_DIRECTORY / "models"))).resolve()
SEMANTIC_MODEL = "ranking.core.semantic.model_files.MINILM_L6_V2_INT8"

# --- Crawling ---------------------------------------------------------------------------------


def _networks(values: list[str]) -> tuple[str, ...]:
    """Validate the egress allow-list at start-up: CIDR networks, or the word ``public``."""
    out = []
    for value in values:
        value = value.strip()
        if not value:
            continue
        if value != "public":
            ipaddress.ip_network(value, strict=False)  # raises ValueError on a bad entry
        out.append(value)
    return tuple(out)


# "public" stands for every globally routable address (no loopback, private, link-local, ...).
CRAWLER_ALLOWED_NETWORKS = _networks(env.list("CRAWLER_ALLOWED_NETWORKS", default=["public"]))
CRAWLER_CA_BUNDLE = env.str("CRAWLER_CA_BUNDLE", default="") or None
CRAWLER_CONNECT_TIMEOUT = env.float("CRAWLER_CONNECT_TIMEOUT", default=5.0)
CRAWLER_READ_TIMEOUT = env.float("CRAWLER_READ_TIMEOUT", default=10.0)      # PAGE_TIMEOUT
CRAWLER_PAGE_DEADLINE = env.float("CRAWLER_PAGE_DEADLINE", default=30.0)    # SINGLE_PAGE_TIMEOUT
CRAWLER_CONCURRENCY = env.int("CRAWLER_CONCURRENCY", default=100)           # urls per round
CRAWLER_PER_HOST_CONCURRENCY = env.int("CRAWLER_PER_HOST_CONCURRENCY", default=8)
# DNS lookups at once per fetcher process (answers are cached); many resolvers stall parallel
# queries until their timeout
CRAWLER_DNS_PARALLEL = env.int("CRAWLER_DNS_PARALLEL", default=1)
# The page that explains the crawler to webmasters (``/bot`` on this site) and how to reach the
# operator (an e-mail address or a url; shown there). The user agent names the page: set
# CRAWLER_BOT_URL to the address the public reaches this site at.
CRAWLER_BOT_URL = env.str("CRAWLER_BOT_URL", default=f"http://{WEB_BIND}/bot")
CRAWLER_CONTACT = env.str("CRAWLER_CONTACT", default="")
CRAWLER_USER_AGENT = env.str("CRAWLER_USER_AGENT", default=f"YioopyBot/0.1 (+{CRAWLER_BOT_URL})")
# Archive crawls of WARC files: their path must be inside one of these folders (absolute;
# symbolic links are followed before the check), and a record that inflates to more than
# ARCHIVE_MAX_RECORD_BYTES is skipped (counted as too_large) instead of read.
ARCHIVE_ROOTS = tuple(Path(p).resolve() for p in env.list(
    "ARCHIVE_ROOTS", default=[str(VAR_DIRECTORY / "archives")]) if p.strip())
ARCHIVE_MAX_RECORD_BYTES = env.int("ARCHIVE_MAX_RECORD_BYTES", default=256 << 20)
# CPU seconds the processing of one page may use (parsing, scrapers' XPath, page rules, PDF);
# past it the page fails with the fetch error kind too_slow and the crawl goes on. 0: no limit.
# In worker processes any work is stopped (the worker is killed and replaced); processing in
# the fetcher's own thread (Celery fetchers, one core) stops only Python-level work.
PAGE_CPU_SECONDS = env.float("PAGE_CPU_SECONDS", default=10.0)
# Indexing plugins (crawler.core.processing.plugins): dotted paths of classes run, in order, on every page
# a fetcher processes, after the summary and scrapers, before it goes to the index. Unset (None):
# the engine's default list (crawler.core.processing.config.DEFAULT_INDEXING_PLUGINS); empty: none.
_plugins = os.environ.get("INDEXING_PLUGINS")
INDEXING_PLUGINS = (None if _plugins is None
                    else tuple(p.strip() for p in _plugins.split(",") if p.strip()))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}
