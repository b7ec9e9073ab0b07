"""Per-seed crawl policies in the crawl itself (seed 004): favor, default and distrust spread
from each seed through the pages it leads to and change what is queued and at what priority.

Layer: ``crawler.core`` (pure Python). The scheduler (:mod:`crawler.core.scheduler`) files urls
by these rules; the fetcher (``crawler.core.fetcher``) carries each url's policy to the links it finds
with :func:`child_policy`.

How a policy travels. A seed starts with its own policy (``SeedSite.policy``) at policy depth 0.
Every url a page links to inherits the page's policy with policy depth + 1 ("carried with each
queued url from its parent"), unless the page *switches* the policy (:func:`page_switch`):

* a scraper extracted a ``crawl_policy`` field (``favor``, ``default`` or ``distrust``) for
  the page, e.g. a scraper whose signature recognises a link farm with
  ``crawl_policy:=distrust``; or
* the page processor classified the page as adult content (it is not ``safe``: the safe
  search test, not a spam detector; link spam is met by link analysis's same-domain limits).

A switched page's links take the new policy at policy depth 1: the frontier changes shape from
that page on, without touching the site rules.

Within a domain only (the crawl's ``policy_within_domain``; seed 004: "or perhaps only for
pages belonging to the same domain"): a link from a page of one registered domain
(:func:`indexer.core.urls.registered_domain`) to a page of another carries the default policy
instead of its page's (:func:`domain_scoped`), so a favored seed's site is favored but not
the sites it cites, and a distrusted site's own pages are held back while its links out are
crawled as any other.

What a policy does in the queue (:func:`tier_adjustment`, :func:`dropped`):

* favor: the url's tier is lowered by ``favor_tier_bonus`` (never below 0), so it is scheduled
  sooner; its trust for the crawl priority is 1;
* default: unchanged; trust 0.5;
* distrust: the tier is raised by ``distrust_tier_penalty``; a distrusted url more than
  ``distrust_max_depth`` links from where distrust began is not queued at all (-1: never
  dropped); trust 0. So the high-quality links of a low-quality page can still be followed,
  without drilling down the low-quality site.

A page reached under several policies (the rule). The queue keeps a url once (its Bloom
filter), so the policy is decided when the url is queued:

1. among the links to the url that arrive together (one fetch batch), the most trusting policy
   wins: favor over default over distrust, and at equal policy the smaller policy depth;
2. a url dropped for distrust is not remembered as seen, so a later link under favor or default
   still queues it (a trusted source vouches for it);
3. once queued, a url keeps the policy it was queued with: a later link, under any policy,
   does not re-file it. Links from a url are judged by the policy the url itself was fetched
   under.

This is TrustRank's "distrust spreads unless the page is favored" (issue 8,
:mod:`linkgraph.core.trust`) made incremental for a crawl that cannot wait for the graph.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from indexer.core.policies import CrawlPolicy
from indexer.core.urls import registered_domain, url_host

POLICY_FIELD = "crawl_policy"
TRUST = {CrawlPolicy.FAVOR: 1.0, CrawlPolicy.DEFAULT: 0.5, CrawlPolicy.DISTRUST: 0.0}
# how trusting a policy is, for rule 1 (higher wins)
RANK = {CrawlPolicy.FAVOR: 2, CrawlPolicy.DEFAULT: 1, CrawlPolicy.DISTRUST: 0}


def parse_policy(value: Any) -> CrawlPolicy:
    """A policy from its name; raises ValueError naming the allowed values."""
    try:
        return CrawlPolicy(str(value).strip().lower())
    except ValueError:
        allowed = ", ".join(p.value for p in CrawlPolicy)
        raise ValueError(f"unknown crawl policy {value!r} (one of {allowed})") from None


def page_switch(fields: Mapping[str, Any], safe: bool = True) -> CrawlPolicy | None:
    """The policy a fetched page switches its outlinks to, or None to keep its own: a
    scraper's ``crawl_policy`` field wins; otherwise a page classified as adult (not ``safe``)
    switches to distrust. An unknown ``crawl_policy`` value is ignored (the scraper's author
    sees it in the page test)."""
    value = fields.get(POLICY_FIELD) if fields else None
    if value:
        try:
            return parse_policy(value)
        except ValueError:
            pass
    if not safe:
        return CrawlPolicy.DISTRUST
    return None


def child_policy(parent: CrawlPolicy | str, parent_depth: int,
                 switch: CrawlPolicy | None) -> tuple[CrawlPolicy, int]:
    """The (policy, policy depth) the links of a page carry."""
    if switch is not None and switch is not CrawlPolicy(parent):
        return switch, 1
    return CrawlPolicy(parent), int(parent_depth) + 1


def same_domain(url: str, other: str) -> bool:
    """Are both urls on hosts of one registered domain? (An unparsable url is on none.)"""
    try:
        host, other_host = url_host(url), url_host(other)
    except ValueError:
        return False
    return bool(host) and registered_domain(host) == registered_domain(other_host)


def domain_scoped(policy: tuple[CrawlPolicy, int], page_url: str,
                  link_url: str) -> tuple[CrawlPolicy, int]:
    """The (policy, policy depth) a link carries when policies stay in their domain: its
    page's, unless the link leaves the page's registered domain, then the default at depth
    0."""
    if policy[0] is CrawlPolicy.DEFAULT or same_domain(page_url, link_url):
        return policy
    return CrawlPolicy.DEFAULT, 0


def more_trusting(a: tuple[CrawlPolicy, int], b: tuple[CrawlPolicy, int]
                  ) -> tuple[CrawlPolicy, int]:
    """Rule 1: of two (policy, policy depth) reaching one url together, the one it is queued
    under."""
    ka = (RANK[CrawlPolicy(a[0])], -a[1])
    kb = (RANK[CrawlPolicy(b[0])], -b[1])
    return a if ka >= kb else b


def tier_adjustment(policy: CrawlPolicy | str, favor_bonus: int, distrust_penalty: int) -> int:
    """What the policy adds to a url's tier (negative: scheduled sooner)."""
    policy = CrawlPolicy(policy)
    if policy is CrawlPolicy.FAVOR:
        return -favor_bonus
    if policy is CrawlPolicy.DISTRUST:
        return distrust_penalty
    return 0


def dropped(policy: CrawlPolicy | str, policy_depth: int, distrust_max_depth: int) -> bool:
    """True when a distrusted url is too far from where distrust began to be queued."""
    return (CrawlPolicy(policy) is CrawlPolicy.DISTRUST and distrust_max_depth >= 0
            and policy_depth > distrust_max_depth)


def trust(policy: CrawlPolicy | str) -> float:
    return TRUST[CrawlPolicy(policy)]


# compact codes for the queue's url records
CODE = {CrawlPolicy.FAVOR: "f", CrawlPolicy.DEFAULT: "d", CrawlPolicy.DISTRUST: "x"}
FROM_CODE = {code: policy for policy, code in CODE.items()}
