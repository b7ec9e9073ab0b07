"""Public pages about a site rather than a query (issue 38): "Is my site indexed?"
(:mod:`.site_status`, ``/indexed``) and a crawled site's ``llms.txt`` (:mod:`.llms_txt`)."""
