"""What a result shows: a stored page summary read without its whole text, snippets and
highlighted titles, and markup debris removed from them.

Runs in the process that reads the summaries (a shard's) and in the web process (snippets).
"""
