"""The query language: a query string parsed into a value, and the numbers in it read as ASCII.

Runs wherever a query is parsed: the web process (name server) and a queue server's shard
endpoint (which parses the query a name server sends).
"""
