"""Django management commands of the operations app."""
