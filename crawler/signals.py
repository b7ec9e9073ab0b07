"""What a crawl's life tells the code that reacts to it: Django signals sent by the crawl
services (:mod:`crawler.services`), inside their transactions.

Layer: Django glue. The services change a crawl's state and send these; they import none of the
receivers, which are connected when their apps load (``AppConfig.ready``): the crawler's own
link analysis (:mod:`crawler.link_analysis`) and the search-index choice (``searchindex``, an
app above the crawler). Receivers run in the sender's transaction, in the order they were
connected; an exception in one propagates to the service, as a direct call would.

Every signal is sent with ``sender=Crawl`` and these keyword arguments:

* :data:`crawl_starting` ``crawl``: a crawl is about to start (not yet active).
* :data:`crawl_ended` ``crawl``: a crawl has ended (stopped and saved, or finished) and no
  longer holds the active-crawl lock.
* :data:`crawl_repeating` ``crawl``: ``crawl`` is about to start over as a new repeat crawl.
* :data:`crawl_replaced` ``old``, ``repeat``: a repeat ended with documents and takes ``old``'s
  place, in the finishing transaction.
* :data:`crawl_documents_complete` ``crawl_id``, ``reason``: the crawl's documents are all on
  disk once the transaction commits (its link analysis is asked for then).
"""

from django.dispatch import Signal

crawl_starting = Signal()
crawl_ended = Signal()
crawl_repeating = Signal()
crawl_replaced = Signal()
crawl_documents_complete = Signal()
