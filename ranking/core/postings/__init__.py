"""Matching: iterators over blocks of posting lists, their combinators, the query plan and the
first n matches in crawl or importance order, within read bounds.

Runs in the process that holds a shard's index (a queue server's shard endpoint, or the web
process for its local shards); knows nothing of scores.
"""
