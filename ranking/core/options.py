"""Page Options, Search Time: the knobs of the query pipeline, as a frozen value.

Layer: ``ranking.core``. ``ranking.selectors.search_options_get`` builds it from the PageOptions
row; the search pipeline receives nothing else. Defaults follow the seed document 000 and
the Yioop design document, except three tuned on the dev judgments
(``bench/relevance_eval.py``, issues 6, 8 and 16): the proximity weight (10, from when proximity
was added to the score; it is now fused by rank with the rest of the score, see
:func:`ranking.core.scoring.formulas.fuse`, so any positive weight gives the same order and 0 leaves
proximity out; the proximity bonus weighs its share of the fusion) and the link score weight
(0.5, the better of on and off since proximity is fused by rank; it was 2 before), and the
common phrase bonus (3: on the bench's cached default-tier index, MRR@10 went
from 0.815 without it to 0.811 at 1, 0.813 at 2 and 0.817 from 3 up, where a page holding a
common phrase in order already comes before comparable pages that do not; concept queries
0.572 -> 0.600).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SearchOptions:
    # the seed's n is 200; 500 measured better on the dev judgments (README, Page Options)
    min_results_to_group: int = 500
    server_alpha: float = 1.6
    results_per_page: int = 10
    intersect_time_budget: float = 3.0  # seconds
    # the three main scores
    doc_rank_weight: float = 1.0
    relevance_weight: float = 1.0
    proximity_weight: float = 10.0  # > 0: fused by rank with the score (0: left out)
    # link analysis (issue 8): LinkRank and trust from score_update, beside Doc Rank
    link_score_weight: float = 0.5
    # region weights of the DFR frequency
    title_weight: float = 4.0
    description_weight: float = 1.0
    link_weight: float = 2.0
    # bonuses added to relevance
    host_keyword_bonus: float = 2.0
    title_bonus: float = 2.0
    path_bonus: float = 1.0
    # the seed's common phrases: added when the result holds a query phrase common in the
    # crawl's titles and anchor texts with its words in order (indexer.core.signals.phrases)
    common_phrase_bonus: float = 3.0
    # issue 36: a page that defines what the whole query names (an API object, a module, a
    # setting), or one of whose headings or defined terms is the whole query
    # (ranking.core.shard.definitions); chosen on the dev judgments (README)
    definition_bonus: float = 16.0
    topic_bonus: float = 8.0
    # bonuses added to doc rank
    cld_url_bonus: float = 2.0
    host_url_bonus: float = 0.5
    wiki_bonus: float = 0.5
    num_slashes_bonus: float = 0.5
    # multipliers
    proximity_bonus: float = 1.0  # the proximity's weight in the fusion by rank
    # Page Options' classifier rank weights, by classifier slot (classifiers.core.apply): a
    # page's classifier score times its weight is added to the score beside Doc Rank
    classifier_weights: tuple[float, ...] = ()
    # snippets
    description_length: int = 150
    min_description_length: int = 100
    snippet_left: int = 20
    snippet_right: int = 40
    # search page elements
    show_word_suggest: bool = True
    show_cache_link: bool = True
    show_similar_link: bool = True
    show_inlinks_link: bool = True
    show_result_score: bool = True
    # urls never shown in results (curation: ranking.core.search.curation); not a Page Option
    hidden_urls: frozenset[str] = frozenset()
    # hosts none of whose pages are shown (curation's host filter); not a Page Option
    hidden_hosts: frozenset[str] = frozenset()
    # the semantic signal (ranking.core.semantic.rerank), not a Page Option: the weight of the
    # embedding rank fused with the score's rank over the first ``semantic_depth`` groups
    # (k ``semantic_k``). 0, the default, is off: on the dev judgments it lowered MRR@10 and
    # the concept queries (docs/semantic.md); the setting SEMANTIC_WEIGHT turns it on.
    semantic_weight: float = 0.0
    semantic_depth: int = 50
    semantic_k: float = 60.0
    # not a Page Option: how many best groups by score an exact shard must find exactly
    # (ranking.core.shard.exact; the search pipeline sets it to the fusion's pool, 0: the n
    # the shard is asked for)
    exact_groups: int = 0
