"""``manage.py fetch_semantic_model [--from URL]``: download the semantic signal's model files.

Glue for :func:`ranking.core.semantic.model_files.download_model`: the configured model's files
(``SEMANTIC_MODEL``: by default all-MiniLM-L6-v2's int8 ONNX export and tokenizer from its
authors' repository, at a pinned revision) are downloaded over HTTPS into
``SEMANTIC_MODEL_DIR/<repository>/<revision>/`` and kept only when their sha256 is the pinned
one. ``--from`` names a mirror holding the same paths (the hashes still decide). Files already
there and intact are not downloaded again. Exits with an error, keeping nothing of it, when a
file is not the pinned one or cannot be downloaded.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ranking.core.semantic.model_files import ModelFileError, download_model
from ranking.semantic_model import model_root, model_spec


class Command(BaseCommand):
    help = "Download the semantic signal's model files and check their pinned sha256."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--from", dest="base_url", metavar="URL", default=None,
                            help="a mirror of the files (default: the model's authors' "
                                 "repository at the pinned revision)")

    def handle(self, *args: Any, **options: Any) -> None:
        spec, root = model_spec(), model_root()
        try:
            fetched = download_model(spec, root, base_url=options["base_url"])
        except ModelFileError as exc:
            raise CommandError(str(exc)) from exc
        folder = spec.folder(root)
        if fetched:
            self.stdout.write(f"Downloaded {', '.join(fetched)} of {spec.repository} at "
                              f"{spec.revision} into {folder} (sha256 verified).")
        else:
            self.stdout.write(f"The files of {spec.repository} at {spec.revision} are already "
                              f"in {folder} (sha256 verified).")
