"""Process-level services of the index: where files live, when to reload them, the collector.

:mod:`.workdir` (the work-directory layout: the one place that knows its names),
:mod:`.reloading` (:class:`~.reloading.ReloadingFile`, the one "reload a file when it changes"
cache) and :mod:`.gc_pause` (pausing the cyclic collector during a batch). Used by every
process: queue servers, fetchers, link analysis, search.
"""
