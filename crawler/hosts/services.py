"""The operator's overrides of a crawl's hosts, as the admin's host page writes them.

Layer: Django glue (writes). An override is one ``HostOverride`` row per crawl and origin: a
minimum delay between the host's requests and whether it is excluded. The queue server that
owns the host polls them (``crawler.hosts.activity``, every ``HOST_OVERRIDE_SECONDS``), applies
them to its crawl queue and marks them applied. Lifting an override keeps its row with no
delay and no exclusion, so a queue server that was down meanwhile lifts it too. Excluding a
host refuses its queued urls for good: lifting the exclusion lets only new urls in.
"""

from __future__ import annotations

from crawler.core.urls import origin_of
from crawler.models import HostOverride

MAX_MIN_DELAY = 3600.0  # seconds


class HostOverrideError(ValueError):
    """An override the admin cannot store (a bad origin or delay)."""


def host_origin_check(origin: str) -> str:
    """``origin`` if it is an ``http(s)://host[:port]`` origin as the crawl keeps them."""
    text = str(origin or "").strip()
    if len(text) > 300 or not text.startswith(("http://", "https://")):
        raise HostOverrideError(f"not a host's origin: {text[:80]!r}")
    try:
        if origin_of(text) != text or text.endswith("://"):
            raise HostOverrideError(f"not a host's origin: {text[:80]!r}")
    except ValueError:
        raise HostOverrideError(f"not a host's origin: {text[:80]!r}") from None
    return text


def host_override_set(crawl_id: int, origin: str, *, min_delay: float | None = None,
                      excluded: bool | None = None) -> HostOverride:
    """Set the minimum delay and/or exclusion of one host of a crawl (the other part is kept);
    the owning queue server applies it within seconds (``applied_at`` is cleared until)."""
    origin = host_origin_check(origin)
    if min_delay is not None and not 0.0 <= float(min_delay) <= MAX_MIN_DELAY:
        raise HostOverrideError(f"a minimum delay is 0 to {MAX_MIN_DELAY:g} seconds")
    row, _ = HostOverride.objects.get_or_create(crawl_id=crawl_id, origin=origin)
    if min_delay is not None:
        row.min_delay = float(min_delay)
    if excluded is not None:
        row.excluded = bool(excluded)
    row.applied_at = None
    row.save()
    return row


def host_override_lift(crawl_id: int, origin: str) -> HostOverride:
    """No minimum delay and no exclusion for this host any more."""
    return host_override_set(crawl_id, origin, min_delay=0.0, excluded=False)
