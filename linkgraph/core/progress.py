"""A text progress bar for the link-analysis commands (pure: writes to any text stream)."""

from __future__ import annotations

import time
from typing import TextIO


class ProgressBar:
    """``[#####-----] 50% label`` redrawn in place on a terminal, a few lines otherwise.

    ``update(done, total)`` may be called often: it redraws at most every ``interval`` seconds
    (always on completion).
    """

    def __init__(self, stream: TextIO, label: str, width: int = 30, interval: float = 0.2,
                 tty: bool | None = None) -> None:
        self.stream = stream
        self.label = label
        self.width = width
        self.interval = interval
        self.tty = stream.isatty() if tty is None else tty
        self._last = 0.0
        self._started = time.monotonic()
        self._printed_pct = -1

    def update(self, done: int, total: int, note: str = "") -> None:
        now = time.monotonic()
        complete = total > 0 and done >= total
        if not complete and now - self._last < self.interval:
            return
        self._last = now
        frac = min(1.0, done / total) if total > 0 else 0.0
        filled = int(self.width * frac)
        bar = "#" * filled + "-" * (self.width - filled)
        line = f"[{bar}] {frac:4.0%} {self.label} {done}/{total} {note}".rstrip()
        if self.tty:
            self.stream.write("\r" + line + ("\n" if complete else ""))
            self.stream.flush()
            return
        pct = int(frac * 4) * 25  # non-terminals get 0/25/50/75/100% lines only
        if pct != self._printed_pct:
            self._printed_pct = pct
            self.stream.write(line + "\n")

    def elapsed(self) -> float:
        return time.monotonic() - self._started
