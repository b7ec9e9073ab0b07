# The search-index choice and crawl mixes move from the crawler app to this one. Their tables
# keep their names (crawler_crawlmix, crawler_crawlmixmember, crawler_searchindex) and their
# rows: only the migration state changes here (the crawler's 0023 removes the models from its
# own state). Their content types are renamed to this app, so that the permissions granted on
# them (above all "change search index") and the admin's log entries follow the models.

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models

MODELS = ("crawlmix", "crawlmixmember", "searchindex")


def _relabel(apps, schema_editor, old: str, new: str) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    rows = content_type.objects.using(schema_editor.connection.alias)
    for model in MODELS:
        if not rows.filter(app_label=new, model=model).exists():
            rows.filter(app_label=old, model=model).update(app_label=new)


def content_types_forward(apps, schema_editor):
    _relabel(apps, schema_editor, "crawler", "searchindex")


def content_types_backward(apps, schema_editor):
    _relabel(apps, schema_editor, "searchindex", "crawler")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('crawler', '0022_archive_crawls'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='CrawlMix',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.SlugField(help_text='Letters, digits, - and _ only: it is typed in queries as m:NAME.', max_length=100, unique=True)),
                        ('description', models.TextField(blank=True)),
                    ],
                    options={
                        'verbose_name': 'crawl mix',
                        'db_table': 'crawler_crawlmix',
                        'ordering': ['name'],
                    },
                ),
                migrations.CreateModel(
                    name='SearchIndex',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('mode', models.CharField(choices=[('crawl', 'This crawl'), ('mix', 'This crawl mix'), ('newest', 'Always the newest finished crawl')], default='crawl', max_length=10)),
                        ('changed_at', models.DateTimeField(auto_now=True)),
                        ('crawl', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='crawler.crawl')),
                        ('mix', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='searchindex.crawlmix')),
                    ],
                    options={
                        'verbose_name': 'search index',
                        'verbose_name_plural': 'search index',
                        'db_table': 'crawler_searchindex',
                    },
                ),
                migrations.CreateModel(
                    name='CrawlMixMember',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('weight', models.FloatField(default=1.0, help_text="Scores of this crawl's results are multiplied by this. 0.01 to 100.", validators=[django.core.validators.MinValueValidator(0.01), django.core.validators.MaxValueValidator(100.0)])),
                        ('crawl', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='mix_memberships', to='crawler.crawl')),
                        ('mix', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='members', to='searchindex.crawlmix')),
                    ],
                    options={
                        'db_table': 'crawler_crawlmixmember',
                        'ordering': ['id'],
                        'constraints': [models.UniqueConstraint(fields=('mix', 'crawl'), name='unique_crawl_per_mix')],
                    },
                ),
            ],
        ),
        migrations.RunPython(content_types_forward, content_types_backward),
    ]
