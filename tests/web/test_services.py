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
    assert crawl.status == "running" and crawl.channel == 0
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


def test_crawls_run_at_once_up_to_the_limit_each_on_its_channel(make_crawl, settings):
    settings.MAX_ACTIVE_CRAWLS = 2
    first, second, third = (make_crawl(name, seeds=(f"https://{name}.example/",))
                            for name in ("first", "second", "third"))
    assert services.crawl_start(first.pk).channel == 0
    assert services.crawl_start(second.pk).channel == 1
    with pytest.raises(services.CrawlServiceError) as refused:
        services.crawl_start(third.pk)
    assert str(refused.value) == (
        "2 crawls are active ('first' (running), 'second' (running)), the most that may run "
        "at once (MAX_ACTIVE_CRAWLS = 2): stop one first")
    assert Crawl.objects.get(pk=third.pk).status == "new"
    assert Crawl.objects.get(pk=second.pk).status == "running"  # the others go on
    services.crawl_stop(first.pk)
    assert services.crawl_start(third.pk).channel == 0  # the channel first left
    with pytest.raises(services.CrawlServiceError, match="'third'.*'second'.*stop one"):
        services.crawl_resume(first.pk)
    services.crawl_stop(second.pk)
    assert services.crawl_resume(first.pk).channel == 1
    assert list(Crawl.objects.filter(channel__isnull=False).order_by("channel")
                .values_list("name", flat=True)) == ["third", "first"]


def test_the_admin_says_why_a_crawl_beyond_the_limit_does_not_start(admin_client, make_crawl,
                                                                    settings):
    settings.MAX_ACTIVE_CRAWLS = 1
    first = make_crawl("first", restrict_to_seeds=True)
    second = make_crawl("second", seeds=("https://b.com/",), restrict_to_seeds=True)
    services.crawl_start(first.pk)
    response = admin_client.post(f"/admin/crawler/crawl/{second.pk}/do/start/", follow=True)
    assert response.status_code == 200
    shown = [str(m) for m in response.context["messages"]]
    assert any("1 crawls are active ('first' (running))" in m and "MAX_ACTIVE_CRAWLS = 1" in m
               and "stop one first" in m for m in shown), shown
    assert Crawl.objects.get(pk=second.pk).status == "new"
    listing = admin_client.get("/admin/crawler/crawl/").content.decode()
    assert "Running (channel 0)" in listing


def test_database_refuses_two_crawls_on_one_channel(make_crawl):
    from django.db import IntegrityError, transaction

    a, b = make_crawl("a"), make_crawl("b")
    Crawl.objects.filter(pk=a.pk).update(channel=0, status="running")
    Crawl.objects.filter(pk=b.pk).update(channel=1, status="running")
    with pytest.raises(IntegrityError), transaction.atomic():
        Crawl.objects.filter(pk=b.pk).update(channel=0)


def test_stop_without_queue_servers_is_resumable_at_once(make_crawl):
    crawl = make_crawl()
    services.crawl_start(crawl.pk)
    crawl = services.crawl_stop(crawl.pk)
    assert crawl.status == "resumable" and crawl.channel is None
    crawl = services.crawl_resume(crawl.pk)
    assert crawl.status == "running"


def test_stop_with_live_queue_server_waits_for_saved_queue(make_crawl):
    QueueServer.objects.create(server_id=0, base_url="http://127.0.0.1:1/", state="up",
                               last_heartbeat=timezone.now())
    crawl = make_crawl()
    services.crawl_start(crawl.pk)
    crawl = services.crawl_stop(crawl.pk)
    assert crawl.status == "stopping" and crawl.channel == 0
    with pytest.raises(services.CrawlServiceError, match="cannot resume"):
        services.crawl_resume(crawl.pk)
    crawl = services.crawl_mark_saved(crawl.pk)
    assert crawl.status == "resumable" and crawl.channel is None


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
