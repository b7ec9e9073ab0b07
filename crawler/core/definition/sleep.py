"""A crawl's sleep window: the hours of the day in which it fetches nothing (Yioop's crawl
sleep, "crawl only at night").

Layer: ``crawler.core``. Written ``HH:MM-HH:MM`` (the server's local time, the ``TIME_ZONE``
setting): from the first time, up to but not including the second; a window that passes
midnight (``22:00-06:00``) wraps. While a crawl sleeps its queue servers hand out no schedules
(``crawler.core.queue_server.server.QueueServerCore.take_schedules``); the fetchers finish
the schedules they hold, received pages are still indexed, and the crawl wakes where it
stopped. An empty text is no window.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

_WINDOW = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*$")
DAY_MINUTES = 24 * 60


class SleepWindowError(ValueError):
    """A sleep window that does not parse; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class SleepWindow:
    """``start`` and ``end`` in minutes after midnight, local time (``start != end``)."""

    start: int
    end: int

    @classmethod
    def parse(cls, text: str) -> SleepWindow | None:
        """The window of ``HH:MM-HH:MM`` text; None for an empty text;
        :class:`SleepWindowError` for anything else."""
        if not text or not text.strip():
            return None
        match = _WINDOW.match(text)
        if match is None:
            raise SleepWindowError(f"a sleep window is written HH:MM-HH:MM, for example "
                                   f"08:00-20:00, not {text.strip()!r}")
        hours_a, minutes_a, hours_b, minutes_b = (int(g) for g in match.groups())
        for hours, minutes in ((hours_a, minutes_a), (hours_b, minutes_b)):
            if hours > 23 or minutes > 59:
                raise SleepWindowError(f"{hours:02d}:{minutes:02d} is not a time of day "
                                       "(00:00 to 23:59)")
        start, end = hours_a * 60 + minutes_a, hours_b * 60 + minutes_b
        if start == end:
            raise SleepWindowError("a sleep window's start and end must differ (an empty "
                                   "field is no window)")
        return cls(start, end)

    def asleep_at(self, minute: int) -> bool:
        """Whether ``minute`` after midnight is in the window."""
        if self.start < self.end:
            return self.start <= minute < self.end
        return minute >= self.start or minute < self.end

    def asleep(self, when: float) -> bool:
        """Whether the Unix time ``when`` falls in the window, in local time."""
        local = time.localtime(when)
        return self.asleep_at(local.tm_hour * 60 + local.tm_min)

    def __str__(self) -> str:
        return (f"{self.start // 60:02d}:{self.start % 60:02d}-"
                f"{self.end // 60:02d}:{self.end % 60:02d}")
