# Crawl mixes get a "public" flag (issue 34, item 13): anonymous users may search only public
# mixes with m:NAME (and the mix chosen for search). Existing mixes are not public, except the
# one chosen for search, which anyone searches today.

from django.db import migrations, models


def chosen_mix_public(apps, schema_editor):
    alias = schema_editor.connection.alias
    row = apps.get_model("searchindex", "SearchIndex").objects.using(alias).filter(pk=1).first()
    if row is not None and row.mode == "mix" and row.mix_id is not None:
        apps.get_model("searchindex", "CrawlMix").objects.using(alias).filter(
            pk=row.mix_id).update(public=True)


class Migration(migrations.Migration):

    dependencies = [
        ('searchindex', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='crawlmix',
            name='public',
            field=models.BooleanField(default=False, help_text='Anyone may search this mix with m:NAME, and so its crawls. Unticked, only staff users may, unless it is the index chosen for search.', verbose_name='open to anonymous search'),
        ),
        migrations.RunPython(chosen_mix_public, migrations.RunPython.noop),
    ]
