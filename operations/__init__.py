"""The engine's operations app: what keeps its processes and its admin running, not crawling or
search.

It holds the supervisor of ``manage.py up`` (:mod:`operations.supervisor`), the one-process-per-
directory lock (:mod:`operations.instance_lock`), children that die with their parent
(:mod:`operations.process_death`), the umask and start-time pass that keep what the engine
writes private to its user (:mod:`operations.private_files`), the embedded Redis ``up`` starts
(:mod:`operations.embedded_redis`) and the Redis urls every process derives from ``REDIS_URL``
(:mod:`operations.redis_urls`, read by the settings), and the admin login throttle with the
client address it counts by (:mod:`operations.login_throttle`). The first four are plain
Python, run in ``manage.py up``, the queue-server process and (the umask) every entry point; so
is the url module; the throttle runs in the web processes. It imports
none of the other apps of the project: they all may import it.
"""
