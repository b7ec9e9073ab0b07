"""The on-disk index and the facts every app shares about urls and documents (pure Python).

Top-level modules are the shared vocabulary: :mod:`.ids` (document and term ids), :mod:`.urls`
(a url's host, its hash, the queue server that owns it), :mod:`.errors`, :mod:`.policies`,
:mod:`.meta_vocabulary`, :mod:`.shard_token`. The packages hold the index itself: ``files/``
(byte-level formats), ``partition/``, ``dictionary/``, ``documents/``, ``bundle/``,
``signals/`` (link scores, common phrases), ``runtime/`` (work directory, reloading files) and
``text/`` (analysis). Imported by every app and every process; imports none of them.
"""
