"""The operations app's ``manage.py`` commands: ``up`` (the whole engine on one machine,
supervised) and ``ensure_admin`` (the administrator account, once)."""
