"""What crosses processes: the JSON forms of documents, urls and schedules (:mod:`.wire`), the
batch a fetcher ships to a queue server (:mod:`.batch`) with what it carries (url visits,
:mod:`.visits`; failed downloads by kind, :mod:`.fetch_error_kinds`), sharding and signed
envelopes (:mod:`.shipping`), and the queue server's durable inbox (:mod:`.spool`).

Runs in: both sides of every message: fetchers build and seal, the queue server's Celery worker
spools, the queue server parses and applies. Pure Python; no Django or Celery (the glue carries
the envelopes).
"""
