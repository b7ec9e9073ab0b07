"""The crawl state machine as the services enforce it, and bulk seed entry."""

import pytest
from django.utils import timezone

from crawler import selectors, services
from crawler.models import Crawl, QueueServer, SeedSite

pytestmark = pytest.mark.django_db


def test_start_copies_page_options(make_crawl, options):
    crawl = make_crawl()
    services.crawl_start(crawl.pk)
    crawl.refresh_from_db()
    assert crawl.status == "running" and crawl.active_lock is True
    assert crawl.page_options_snapshot["byte_range"] == 4_000_000
    # editing the profile afterwards does not change the running crawl's copy
    options.byte_range = 5000
    options.save()
    crawl.refresh_from_db()
    assert crawl.page_options_snapshot["byte_range"] == 4_000_000


def test_cannot_start_twice_or_without_seeds(make_crawl):
    crawl = make_crawl()
    services.crawl_start(crawl.pk)
    with pytest.raises(services.CrawlServiceError, match="cannot start a crawl that is running"):
        services.crawl_start(crawl.pk)
    empty = make_crawl(name="empty", seeds=())
    with pytest.raises(services.CrawlServiceError, match="no seed sites"):
        services.crawl_start(empty.pk)


def test_one_active_crawl_at_a_time(make_crawl):
    first, second = make_crawl("first"), make_crawl("second", seeds=("https://b.com/",))
    services.crawl_start(first.pk)
    with pytest.raises(services.CrawlServiceError, match="first.*stop it first"):
        services.crawl_start(second.pk)
    assert Crawl.objects.get(pk=second.pk).status == "new"
    services.crawl_stop(first.pk)
    services.crawl_start(second.pk)
    with pytest.raises(services.CrawlServiceError, match="second"):
        services.crawl_resume(first.pk)


def test_database_refuses_two_active_crawls(make_crawl):
    from django.db import IntegrityError, transaction

    a, b = make_crawl("a"), make_crawl("b")
    Crawl.objects.filter(pk=a.pk).update(active_lock=True, status="running")
    with pytest.raises(IntegrityError), transaction.atomic():
        Crawl.objects.filter(pk=b.pk).update(active_lock=True, status="running")


def test_stop_without_queue_servers_is_resumable_at_once(make_crawl):
    crawl = make_crawl()
    services.crawl_start(crawl.pk)
    crawl = services.crawl_stop(crawl.pk)
    assert crawl.status == "resumable" and crawl.active_lock is None
    crawl = services.crawl_resume(crawl.pk)
    assert crawl.status == "running"


def test_stop_with_live_queue_server_waits_for_saved_queue(make_crawl):
    QueueServer.objects.create(server_id=0, base_url="http://127.0.0.1:1/", state="up",
                               last_heartbeat=timezone.now())
    crawl = make_crawl()
    services.crawl_start(crawl.pk)
    crawl = services.crawl_stop(crawl.pk)
    assert crawl.status == "stopping" and crawl.active_lock is True
    with pytest.raises(services.CrawlServiceError, match="cannot resume"):
        services.crawl_resume(crawl.pk)
    crawl = services.crawl_mark_saved(crawl.pk)
    assert crawl.status == "resumable" and crawl.active_lock is None


def test_finish_and_close(make_crawl):
    crawl = make_crawl()
    services.crawl_start(crawl.pk)
    assert services.crawl_finish(crawl.pk).status == "stopped"
    with pytest.raises(services.CrawlServiceError, match="cannot resume a crawl that is stopped"):
        services.crawl_resume(crawl.pk)
    assert services.crawl_close(crawl.pk).status == "closed"
    with pytest.raises(services.CrawlServiceError):
        services.crawl_start(crawl.pk)
    with pytest.raises(services.CrawlServiceError, match="does not exist"):
        services.crawl_start(99999)


def test_bulk_seeds_all_or_nothing(make_crawl):
    crawl = make_crawl(seeds=("https://a.com/",))
    result = services.seed_sites_add_bulk(
        crawl.pk, "https://A.com\nhttps://b.com/x\nhttps://b.com/x\n", "favor", 2.5)
    assert result.added == ("https://b.com/x",)
    assert result.already_present == ("https://a.com/",)
    assert result.repeated_in_input == ("https://b.com/x",)
    assert SeedSite.objects.get(url="https://b.com/x").policy == "favor"
    with pytest.raises(services.CrawlServiceError, match="line 2 .*'nope'"):
        services.seed_sites_add_bulk(crawl.pk, "https://c.com/\nnope\n")
    assert not SeedSite.objects.filter(url="https://c.com/").exists()
    with pytest.raises(services.CrawlServiceError, match="trust weight"):
        services.seed_sites_add_bulk(crawl.pk, "https://d.com/", trust_weight=500)


def test_heartbeat_registers_queue_server():
    services.queue_server_heartbeat(2, "http://127.0.0.1:9002/", {"urls_queued": 5})
    server = QueueServer.objects.get(server_id=2)
    assert server.state == "up" and server.counters == {"urls_queued": 5}
    assert selectors.live_queue_servers() == [server]
