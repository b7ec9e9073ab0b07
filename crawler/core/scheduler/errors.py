"""Errors of the crawl queue (``crawler.core.scheduler``).

The queue raises and never swallows; the queue-server glue decides what to do (refuse a message,
stop the process, ask the admin to delete a corrupt queue).
"""

from __future__ import annotations


class SchedulerError(Exception):
    """Base class of crawl-queue errors."""


class SchedulerConfigError(SchedulerError, ValueError):
    """A :class:`~crawler.core.scheduler.config.SchedulerConfig` field is out of range."""


class InvalidUrlError(SchedulerError, ValueError):
    """A url (or host origin) the queue cannot store: not http(s), no host, or control
    characters that would break the line-oriented url files."""


class QueueLockedError(SchedulerError):
    """Another process holds the queue directory's lock."""


class CorruptQueueError(SchedulerError):
    """A checkpoint file fails its checksum or has an unknown format; the queue cannot be
    opened safely. ``path`` names the file."""

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class QueueClosedError(SchedulerError):
    """The queue was used after :meth:`CrawlQueue.close`."""
