"""The score formulas (relevance, proximity, bonuses, fusion) and the query-time grouping of
candidates into results, shared by the pipeline and the shard server's head prefetch.

Pure functions over numpy arrays; runs in the web process and in a queue server's shard
endpoint.
"""
