"""One shard's side of a query: the contract every shard client keeps
(:class:`~ranking.core.shard.candidates.ShardClient`), the candidates it answers with, and
:class:`~ranking.core.shard.local.LocalShard`, which matches and scores over one index bundle
and reads the summaries its results show.

Runs in the process that holds the bundle: a queue server's shard endpoint, or the web process
for its local shards.
"""
