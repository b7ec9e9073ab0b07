"""``manage.py up``: the whole engine on one machine, supervised."""
