# Crawls get a "public" flag (issue 34, item 13): anonymous users may search only public crawls
# by timestamp (its=), besides the index chosen for search and the crawls of public mixes. New
# and existing crawls are not public, except the crawl search answers from today, which keeps
# being searchable by its timestamp as before: the chosen crawl; in "newest" mode, the newest
# ended crawl with documents; with no choice made, the newest crawl with an index.

from django.db import migrations, models

ENDED = ("stopped", "resumable", "closed")


def _searched_crawl(apps, alias):
    crawls = apps.get_model("crawler", "Crawl").objects.using(alias)
    row = apps.get_model("searchindex", "SearchIndex").objects.using(alias).filter(pk=1).first()
    if row is None:
        return crawls.exclude(status="new").order_by("-timestamp").first()
    if row.mode == "crawl":
        return row.crawl
    if row.mode == "newest":
        return (crawls.filter(status__in=ENDED, documents_indexed__gt=0)
                .order_by("-timestamp").first())
    return None  # a mix: searchindex's 0002 makes the mix public


def searched_crawl_public(apps, schema_editor):
    crawl = _searched_crawl(apps, schema_editor.connection.alias)
    if crawl is not None:
        crawl.public = True
        crawl.save(update_fields=["public"])


class Migration(migrations.Migration):

    dependencies = [
        ('crawler', '0023_search_index_moved_to_searchindex'),
        ('searchindex', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='crawl',
            name='public',
            field=models.BooleanField(default=False, help_text='Anyone may search this crawl by its timestamp (its=) and see its cached pages. Unticked, only staff users may, unless it is the index chosen for search or in a public crawl mix.', verbose_name='open to anonymous search'),
        ),
        migrations.RunPython(searched_crawl_public, migrations.RunPython.noop),
    ]
