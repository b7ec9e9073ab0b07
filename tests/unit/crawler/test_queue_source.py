"""The queue server's contracts with its queue (QueueSource) and its inbox (Inbox): both kinds
of crawl implement every call, with parameters the queue server can pass."""

from __future__ import annotations

import inspect

import pytest

from crawler.core.archive.ordering import OrderedInbox
from crawler.core.archive.queue import ArchiveQueue
from crawler.core.queue_server.page_parts import PageParts
from crawler.core.queue_server.source import Inbox, QueueSource
from crawler.core.scheduler import CrawlQueue


def _calls(protocol: type) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(member) for name, member in vars(protocol).items()
            if callable(member) and not name.startswith("_")}


@pytest.mark.parametrize(("protocol", "implementation"), [
    (QueueSource, CrawlQueue), (QueueSource, ArchiveQueue),
    (Inbox, PageParts), (Inbox, OrderedInbox)])
def test_each_kind_of_crawl_implements_the_contract(protocol, implementation):
    for name, wanted in _calls(protocol).items():
        got = inspect.signature(getattr(implementation, name))
        assert list(got.parameters) == list(wanted.parameters), (implementation, name)
