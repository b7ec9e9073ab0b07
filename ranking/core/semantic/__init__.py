"""The optional semantic signal: the embedding model, the embeddings stored beside a bundle,
building them (``manage.py embed_index``), and re-ranking the first results by them.

The re-ranking runs in the web process; building runs in the management command.
"""
