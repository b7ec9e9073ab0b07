# The search-index choice and crawl mixes moved to the searchindex app (its 0001 takes them over
# with their tables, crawler_searchindex, crawler_crawlmix and crawler_crawlmixmember, and their
# rows): removed from this app's state only.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('crawler', '0022_archive_crawls'),
        ('searchindex', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(name='SearchIndex'),
                migrations.DeleteModel(name='CrawlMixMember'),
                migrations.DeleteModel(name='CrawlMix'),
            ],
        ),
    ]
