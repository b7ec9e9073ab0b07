"""The shard protocol over HTTP: its typed messages, the client a name server asks a remote
shard with, the minimal HTTP client under it, and the server side a queue server answers with.

The client runs in the web process (name server); the server side in a queue server's shard
endpoint (``ranking/api.py``).
"""
