"""System checks of the crawler's settings: a fetcher that cannot fetch is found at start-up.

Layer: Django glue. Registered by :class:`crawler.apps.CrawlerConfig`; ``manage.py up``,
``manage.py crawl`` and every other management command run the checks before they start, so a
typo in ``CRAWLER_CA_BUNDLE`` stops them with one error naming the setting instead of a crawl
that stays at 0 pages while its fetchers fail on every https url (issue 39, item 2).
"""

from __future__ import annotations

import ssl
from pathlib import Path

from django.conf import settings
from django.core import checks


def ca_bundle_check(app_configs, **kwargs) -> list[checks.CheckMessage]:
    """``yioopy.E010`` when ``CRAWLER_CA_BUNDLE`` names nothing readable, or a file or folder
    with no certificate OpenSSL can load (what ``requests`` would fail on at every https
    fetch)."""
    value = settings.CRAWLER_CA_BUNDLE
    if not value:
        return []
    path = Path(value)
    hint = ("CRAWLER_CA_BUNDLE takes the path of a PEM file of the CA certificates to trust "
            "(or of a folder of them prepared with c_rehash); unset it to trust the system's.")
    try:
        context = ssl.create_default_context(cafile=str(path) if path.is_file() else None,
                                             capath=str(path) if path.is_dir() else None)
    except (OSError, ssl.SSLError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return [checks.Error(f"CRAWLER_CA_BUNDLE={value}: not a readable PEM file of CA "
                             f"certificates ({reason})", hint=hint, id="yioopy.E010")]
    if not path.exists():
        return [checks.Error(f"CRAWLER_CA_BUNDLE={value}: no such file or folder", hint=hint,
                             id="yioopy.E010")]
    if path.is_file() and not context.get_ca_certs():
        return [checks.Error(f"CRAWLER_CA_BUNDLE={value}: holds no CA certificate", hint=hint,
                             id="yioopy.E010")]
    return []
