"""The search over every shard: the pipeline (parse, fan out, merge, group, score, top k,
summaries, snippets), its typed messages, the explanation of scores, crawl mixes, curated
results, and what a query with no result shows instead.

Runs in the web process (the name server answering search pages, JSON and RSS).
"""
