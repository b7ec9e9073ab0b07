"""A challenge a person answers and a script must at least compute, with no third party: a
sum of two small numbers, signed by the server (issue 38: the "Is my site indexed?" form), and
a per-client rate limit.

Layer: operations (Django's signing and cache only; no app's models). :func:`challenge_new`
gives the question and a token: the two numbers, a nonce and the time, signed with
``SECRET_KEY`` (``django.core.signing``, its own salt). :func:`challenge_check` accepts a token
at most ``max_age`` seconds old, not seen before (its nonce is kept in the cache until it
would expire anyway: one answer per token), whose sum the answer is. A signature that does not
verify, an old or reused token, or a wrong sum is refused with a reason.

:func:`rate_limited` counts one client's actions per hour in the default cache (per process
without REDIS_URL, as the login throttle's counts are: see ``settings.CACHES``).
"""

from __future__ import annotations

import secrets
import time

from django.core import signing
from django.core.cache import cache

SALT = "yioopy.challenge"
MAX_AGE = 600


def challenge_new() -> tuple[str, str]:
    """(question, token): "a + b" and the signed token that carries a and b."""
    a, b = 2 + secrets.randbelow(18), 2 + secrets.randbelow(18)
    token = signing.dumps({"a": a, "b": b, "n": secrets.token_hex(8)}, salt=SALT)
    return f"{a} + {b}", token


def challenge_check(token: str, answer: str, max_age: int = MAX_AGE) -> str:
    """"" when ``answer`` answers the challenge of ``token`` (which is then used up), else
    why not."""
    try:
        data = signing.loads(str(token or ""), salt=SALT, max_age=max_age)
        a, b, nonce = int(data["a"]), int(data["b"]), str(data["n"])
    except signing.SignatureExpired:
        return "the question expired: answer the new one"
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        return "the question's token is not one this site gave"
    try:
        given = int(str(answer or "").strip())
    except ValueError:
        return "the answer must be a number"
    if given != a + b:
        return "that is not the sum"
    if not cache.add(f"challenge-used:{nonce}", 1, max_age + 60):
        return "this question was answered already: answer the new one"
    return ""


def rate_limited(scope: str, client: str, per_hour: int) -> bool:
    """Count one action of ``client`` in ``scope``; True when it is past ``per_hour`` this
    hour (0: no limit)."""
    if per_hour <= 0:
        return False
    key = f"rate:{scope}:{client}:{int(time.time() // 3600)}"
    if cache.add(key, 1, 3700):
        return False
    try:
        return cache.incr(key) > per_hour
    except ValueError:  # expired between add and incr: this is the window's first
        cache.add(key, 1, 3700)
        return False
