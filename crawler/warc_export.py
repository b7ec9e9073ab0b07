"""WARC export of a crawl: the glue between a crawl's row and ``crawler.core.archive.export``.

Layer: Django glue, used by ``manage.py export_warc``, the admin's action (through
``crawler.tasks.export_warc_task``, on the ``analysis`` worker of a queue-server machine) and
the crawl's status page, which lists the exports made. An export reads the crawl's bundles
under this machine's WORK_DIRECTORY (every queue server's, when they all run here) and writes,
by default, ``WORK_DIRECTORY/warc/<crawl name>-<timestamp>.warc.gz``, its CDXJ index
(``.cdxj``) and a report of what it wrote (``.json``).
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from crawler.core.archive.export import ExportReport, export_crawl
from indexer.core.runtime.workdir import crawl_bundles

from .models import Crawl

logger = logging.getLogger(__name__)

EXPORT_FOLDER = "warc"


class ExportError(Exception):
    """An export that cannot be made; the message says why."""


def exports_dir() -> Path:
    return Path(settings.WORK_DIRECTORY) / EXPORT_FOLDER


def default_path(crawl: Crawl) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", crawl.name).strip("-.")[:80] or "crawl"
    return exports_dir() / f"{slug}-{crawl.timestamp}.warc.gz"


def crawl_find(value: str | int) -> Crawl:
    """A crawl by id or by timestamp; raises :class:`ExportError`."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ExportError(f"{value!r} is not a crawl id or timestamp") from None
    crawl = (Crawl.objects.filter(pk=number).first()
             or Crawl.objects.filter(timestamp=number).first())
    if crawl is None:
        raise ExportError(f"no crawl has id or timestamp {number}")
    return crawl


def crawl_export_warc(crawl_id: int, out: str | os.PathLike[str] | None = None,
                      progress: Callable[[ExportReport], None] | None = None) -> ExportReport:
    """Export crawl ``crawl_id``'s stored pages to ``out`` (default: :func:`default_path`)
    with its CDXJ index and a JSON report beside it; raises :class:`ExportError`."""
    crawl = Crawl.objects.filter(pk=crawl_id).first()
    if crawl is None:
        raise ExportError(f"crawl {crawl_id} does not exist")
    bundles = crawl_bundles(settings.WORK_DIRECTORY, crawl.timestamp)
    if not bundles:
        raise ExportError(f"crawl {crawl.name!r} has no stored pages under "
                          f"{settings.WORK_DIRECTORY}")
    target = Path(out) if out else default_path(crawl)
    info = {"isPartOf": f"{crawl.name} ({crawl.timestamp})", "description":
            f"Pages stored by the crawl {crawl.name!r}; request records are reconstructed "
            "(request line and Host); response headers are those the engine keeps",
            "operator": settings.CRAWLER_CONTACT, "http-header-user-agent":
            settings.CRAWLER_USER_AGENT}
    report = export_crawl(bundles, target, info, progress)
    report_path = target.with_name(target.name + ".json")
    report_path.write_text(json.dumps({"crawl": crawl.pk, "timestamp": crawl.timestamp,
                                       **report.as_json()}), encoding="utf-8")
    logger.info("crawl %s exported to %s: %d pages, %d redirects, %d left out, %.1fs",
                crawl.pk, target, report.pages, report.redirects, report.left_out_total,
                report.seconds)
    return report


def exports_list(crawl: Crawl) -> list[dict]:
    """The reports of the exports of ``crawl`` in the default folder, newest first, each with
    ``download``: its file's name for the admin's download link ("" when not in the folder)."""
    found = []
    for path in exports_dir().glob(f"*-{crawl.timestamp}.warc.gz.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("timestamp") == crawl.timestamp:
            name = Path(str(data.get("path", ""))).name  # its download, when in the folder
            data["download"] = name if export_file(crawl, name) is not None else ""
            found.append(data)
    return sorted(found, key=lambda d: str(d.get("path")), reverse=True)


def export_file(crawl: Crawl, name: str) -> Path | None:
    """The export of ``crawl`` named ``name`` (its WARC file or its CDXJ index) in the exports
    folder, for a download; None for any other name (another crawl's, a path, a missing
    file): only ``<slug>-<timestamp>.warc.gz`` and ``.cdxj`` files directly in the folder."""
    if not re.fullmatch(rf"[A-Za-z0-9._-]+-{crawl.timestamp}\.warc\.gz(\.cdxj)?", name or "") \
            or name.startswith("."):
        return None
    path = exports_dir() / name
    return path if path.is_file() else None
