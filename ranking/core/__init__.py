"""The query side of the engine, pure Python (no Django): one package per stage.

Runs in the web process (the name server answering ``/``, through :mod:`ranking.core.search`)
and in each queue server's shard endpoint (``ranking/api.py``, through
:mod:`ranking.core.remote.server`). Stages, in the order a query meets them:

- :mod:`ranking.core.query.parser`: the query language parsed into a value;
- :mod:`ranking.core.postings`: iterators over posting lists, the query plan, first n matches;
- :mod:`ranking.core.shard.local`: one shard's matching and scoring, and the shard contract
  (:class:`~ranking.core.shard.candidates.ShardClient`, :class:`~ranking.core.shard.candidates.
  Candidates`);
- :mod:`ranking.core.scoring.formulas`: the score formulas and the grouping both sides use;
- :mod:`ranking.core.remote`: the shard protocol over HTTP, client and server;
- :mod:`ranking.core.search`: the pipeline over every shard, fan-out, merging, explanation;
- :mod:`ranking.core.display`: stored summaries read, snippets and titles shown;
- :mod:`ranking.core.semantic.rerank`: the optional embedding signal.

``options`` (Page Options' knobs) and ``errors`` are shared by every stage.
"""
