"""robots.txt data as the crawl queue uses it: a small protocol and its implementations.

Layer: ``crawler.core.scheduler``. The fetch side hands robots data over either as the
robots.txt text (parsed here with protego) or as any object satisfying :class:`RobotsRules`.
The queue's checkpoint state (:mod:`.durable.state`) keeps :class:`RobotsTxt` as its source text and
:data:`ALLOW_ALL`/:data:`DISALLOW_ALL` by name, and refuses other implementations when they are
handed in; the journal pickles the same three (:class:`RobotsTxt` pickles as its source text).

Status rules (the seed, *Yioop Search Engine Ranking Mechanisms*): a 2xx answer uses the rules (an empty or missing body allows
everything), 404 allows everything, any other outcome (403, 5xx, a connection failure reported
as status 0...) disallows the whole host. A crawl-delay above ``max_crawl_delay`` also
disallows the host.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from protego import Protego


@runtime_checkable
class RobotsRules(Protocol):
    """What the queue needs from a host's robots.txt."""

    crawl_delay: float
    sitemaps: Sequence[str]

    def allowed(self, url: str) -> bool:
        """True when the crawler's user agent may fetch ``url``."""
        ...


class RobotsTxt:
    """A parsed robots.txt for one user agent (protego: wildcards, ``$``, longest match).

    ``crawl_delay`` is the delay for the agent (0 when none). Pickles as ``(text, agent)``.
    """

    __slots__ = ("_parsed", "crawl_delay", "sitemaps", "text", "user_agent")

    def __init__(self, text: str | bytes, user_agent: str = "yioopy") -> None:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        self.text = text
        self.user_agent = user_agent
        self._parsed = Protego.parse(text)
        delay = self._parsed.crawl_delay(user_agent)
        self.crawl_delay = float(delay) if delay else 0.0
        self.sitemaps = tuple(self._parsed.sitemaps)

    def allowed(self, url: str) -> bool:
        return bool(self._parsed.can_fetch(url, self.user_agent))

    def __reduce__(self) -> tuple[Any, ...]:
        return (RobotsTxt, (self.text, self.user_agent))

    def __repr__(self) -> str:
        return f"RobotsTxt({len(self.text)} chars, agent={self.user_agent!r})"


class _AllowAll:
    """Every url allowed, no delay (404 robots.txt, or robots ignored)."""

    __slots__ = ()
    crawl_delay = 0.0
    sitemaps: tuple[str, ...] = ()

    def allowed(self, url: str) -> bool:
        return True

    def __reduce__(self) -> str:
        return "ALLOW_ALL"

    def __repr__(self) -> str:
        return "ALLOW_ALL"


class _DisallowAll:
    """No url allowed (robots.txt answered with an error)."""

    __slots__ = ()
    crawl_delay = 0.0
    sitemaps: tuple[str, ...] = ()

    def allowed(self, url: str) -> bool:
        return False

    def __reduce__(self) -> str:
        return "DISALLOW_ALL"

    def __repr__(self) -> str:
        return "DISALLOW_ALL"


ALLOW_ALL: RobotsRules = _AllowAll()
DISALLOW_ALL: RobotsRules = _DisallowAll()


def rules_for_status(rules: RobotsRules | str | bytes | None, status: int, *,
                     user_agent: str, max_crawl_delay: float) -> RobotsRules:
    """The rules the queue applies for a robots.txt fetch that ended with ``status``."""
    if status == 404:
        return ALLOW_ALL
    if not 200 <= status < 300:
        return DISALLOW_ALL
    if rules is None:
        return ALLOW_ALL
    if isinstance(rules, str | bytes):
        rules = RobotsTxt(rules, user_agent)
    if not isinstance(rules, RobotsRules):
        raise TypeError(f"robots rules must be text or RobotsRules, not {type(rules).__name__}")
    if rules.crawl_delay > max_crawl_delay:
        return DISALLOW_ALL
    return rules
