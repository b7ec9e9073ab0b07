#!/usr/bin/env python
"""Django's command-line entry point for the search engine."""

import os
import sys

from operations.private_files import private_umask


def main() -> None:
    private_umask()  # before anything is written: files 0600, folders 0700, children too
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "searchsite.settings.base")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
