"""The server side of the shard protocol: a queue server's answers to a name server.

Layer: ``ranking.core`` (no sockets, no Django). ``ranking/api.py`` serves these answers through
Django, and the test server (``tests/fixtures/shard_server.py``) over a bare socket; both call
:func:`shard_search_answer` and :func:`shard_summaries_payload`, which read the requests and
write the answers with :mod:`ranking.core.remote.protocol`'s messages.

A search answer carries the summary heads of the representatives of the shard's best groups
(:func:`best_representatives`), scored by the one group score the name server uses
(:func:`ranking.core.scoring.grouping.score_groups`), with the link score where the shard has
the crawl's scores (its candidates then carry them to the name server too): the remote client
then does not ask for them again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from indexer.core.ids import DOC_ID_LEN
from indexer.core.signals.link_scores import link_score
from ranking.core.options import SearchOptions
from ranking.core.query.parser import ParsedQuery, QueryParser
from ranking.core.remote.protocol import (
    BINARY_TYPE,
    JSON_TYPE,
    Head,
    SearchAnswer,
    SearchRequest,
    SummariesRequest,
    encode_search_answer,
)
from ranking.core.scoring.grouping import group_bonus, group_rows, score_groups
from ranking.core.shard.candidates import Candidates
from ranking.core.shard.local import LocalShard


def _parse(request: SearchRequest, parser: QueryParser) -> ParsedQuery:
    return parser.parse(request.query, ui_lang=request.lang, safe_search=request.safe)


def shard_search(shard: LocalShard, params: Mapping[str, str], parser: QueryParser,
                 options: SearchOptions) -> tuple[Candidates, dict[bytes, Head]]:
    """The shard's candidates for a search request and the heads of its best groups'
    representatives (as many as the ``heads`` parameter asks for)."""
    answer = _search(shard, SearchRequest.from_params(params, options.min_results_to_group),
                     parser, options)
    return answer.candidates, answer.heads


def _search(shard: LocalShard, request: SearchRequest, parser: QueryParser,
            options: SearchOptions) -> SearchAnswer:
    parsed = _parse(request, parser)
    found = shard.candidates(request.query, parsed, request.n, options)
    heads: dict[bytes, Head] = {}
    if request.heads and len(found):
        ids = best_representatives(found, parsed, options, request.heads)
        heads = dict(zip(ids, shard.summary_heads(ids), strict=True))
    return SearchAnswer(found, heads)


def shard_search_answer(shard: LocalShard, params: Mapping[str, str], parser: QueryParser,
                        options: SearchOptions) -> tuple[bytes, str]:
    """(body, content type) of the search answer: binary when the request says ``fmt=bin``,
    else JSON."""
    request = SearchRequest.from_params(params, options.min_results_to_group)
    answer = _search(shard, request, parser, options)
    if request.binary:
        return encode_search_answer(answer.candidates, answer.heads), BINARY_TYPE
    return json.dumps(answer.to_json()).encode(), JSON_TYPE


def best_representatives(found: Candidates, parsed: ParsedQuery, options: SearchOptions,
                         k: int) -> list[bytes]:
    """doc_ids of the representatives of the ``k`` best groups of one shard's candidates,
    grouped and scored as the name server groups and scores them
    (:func:`ranking.core.scoring.grouping.group_rows`, :func:`~ranking.core.scoring.grouping.score_groups`,
    with each group's link score, the maximum of its members', when the candidates carry link
    scores): the ones whose heads the name server will most likely ask for. A guess: a head it
    asks for and did not get is fetched then."""
    groups = group_rows(found.doc_ids, found.doc_rank, found.relevance, found.proximity,
                        options)
    if not len(groups):
        return []
    link = np.zeros(len(groups))
    if found.linked and options.link_score_weight:
        link[:] = -np.inf
        np.maximum.at(link, groups.member_group, link_score(found.link_relative,
                                                            found.link_trust))
        link[~np.isfinite(link)] = 0.0
    score, _ = score_groups(groups, group_bonus(groups, found.bonuses.sum(axis=0)), options,
                            parsed.controls.weight, parsed.word_count, link)
    top = np.argsort(-score, kind="stable")[:k]
    return [found.doc_ids[int(r)].tobytes() for r in groups.rep[top]]


def shard_summaries_payload(shard: LocalShard, params: Mapping[str, str]) -> dict[str, Any]:
    """The JSON summaries answer: a summary (or only its head) per requested id, None for an
    id that is not a doc_id or not in the shard."""
    request = SummariesRequest.from_params(params)
    valid = [i for i in request.doc_ids if len(i) == DOC_ID_LEN]
    got = iter(shard.summary_heads(valid) if request.heads else shard.summaries(valid))
    return {"summaries": [next(got) if len(i) == DOC_ID_LEN else None
                          for i in request.doc_ids]}
