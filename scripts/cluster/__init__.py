"""The multi-host test of ``scripts/cluster_test.py``: Linux network namespaces as machines."""
