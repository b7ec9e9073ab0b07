# Page recrawl and repeat crawls (issue 21, item 3): a crawl keeps the freshness of its
# indexed copies; a repeat of a crawl names the crawl it repeats, and a crawl when a repeat
# replaced it in search.

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('crawler', '0018_fetch_error_kinds_and_machines'),
    ]

    operations = [
        migrations.AddField(
            model_name='crawl',
            name='freshness',
            field=models.JSONField(blank=True, default=dict, editable=False),
        ),
        migrations.AddField(
            model_name='crawl',
            name='repeat_of',
            field=models.ForeignKey(blank=True, editable=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='repeats', to='crawler.crawl'),
        ),
        migrations.AddField(
            model_name='crawl',
            name='replaced_at',
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AlterField(
            model_name='crawl',
            name='recrawl_days',
            field=models.IntegerField(default=-1, help_text='Start the crawl over after this many days (counted from its start; it must have ended by itself): a new crawl builds a new index while search keeps answering from this one, which it replaces once complete. -1 never.', validators=[django.core.validators.MinValueValidator(-1), django.core.validators.MaxValueValidator(365)], verbose_name='recrawl frequency (days)'),
        ),
    ]
