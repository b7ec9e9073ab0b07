from django.apps import AppConfig, apps
from django.db.models.signals import post_delete, post_save


class RankingConfig(AppConfig):
    name = "ranking"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # imported here, not at the top: both import the selectors, which import models, and
        # Django imports this module before the app registry can load any model
        from .agent.documents import DocumentStore
        from .agent.tools import AgentTools
        from .classifier_source import IndexCandidates
        from .search_service import SearchService

        # the process's one search service: it owns the search side's caches
        self.search_service = SearchService()
        # the agent API's tools (MCP server and JSON endpoints) read through that service
        self.agent_tools = AgentTools(DocumentStore(self.search_service))
        forget = self.search_service.forget_options
        for sender in ("crawler.PageOptions", "crawler.Crawl", "searchindex.SearchIndex",
                       "searchindex.CrawlMix", "searchindex.CrawlMixMember", "ranking.PinnedResult",
                       "ranking.HiddenUrl", "ranking.HiddenHost", "ranking.EditedResult",
                       "ranking.Appearance", "classifiers.Classifier",
                       "classifiers.ClassifierUse"):
            post_save.connect(forget, sender=sender, dispatch_uid=f"search-options-{sender}")
            post_delete.connect(forget, sender=sender,
                                dispatch_uid=f"search-options-del-{sender}")
        # the classifiers' admin finds pages to label with this process's searches
        apps.get_app_config("classifiers").candidate_source = IndexCandidates()
