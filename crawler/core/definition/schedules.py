"""How big a schedule is and how long a fetcher may take over it: the one home of the defaults.

Layer: ``crawler.core.definition`` (no imports). The site's settings
(``DOWNLOAD_SIZE_INTERVAL``, ``SCHEDULE_TIMEOUT`` in ``searchsite.settings``), the queue server's
configuration (:class:`crawler.core.queue_server.config.QueueServerConfig`), the crawl queue's
(:class:`crawler.core.scheduler.SchedulerConfig`) and the archive queue's default to these.
"""

# urls per schedule (Yioop's DOWNLOAD_SIZE_INTERVAL)
DOWNLOAD_SIZE_INTERVAL = 5000
# seconds after which a schedule not acknowledged is handed out again (Yioop's CRAWL_TIMEOUT)
SCHEDULE_TIMEOUT = 1800.0
# urls per schedule of a crawl run inside one process (``manage.py crawl``, LocalCrawl): its
# fetcher threads share one machine, so smaller schedules keep every thread busy to the end
LOCAL_SCHEDULE_SIZE = 500
