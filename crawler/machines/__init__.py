"""The glue of the crawl processes that run on the engine's machines, around ``crawler.core``.

The queue-server process (``manage.py run_queue_server``): :mod:`.queue_server`, with the needy
queries it reads (:mod:`.needy`) and the repeat crawls it starts (:mod:`.repeats`). The fetcher
processes (Celery workers of the ``fetch`` queue): :mod:`.fetching` runs one schedule,
:mod:`.presence` is each process's heartbeat, :mod:`.claim_store` the schedule claims in Redis.
Both sides: :mod:`.seen_envelopes`, the ids of handled messages in Redis.
"""
