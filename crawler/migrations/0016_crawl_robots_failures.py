# A crawl keeps its robots.txt failures (by kind, with an example) and why it ended with
# nothing indexed, for its admin page (issue 18).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('crawler', '0015_search_index_and_mixes'),
    ]

    operations = [
        migrations.AddField(
            model_name='crawl',
            name='end_reason',
            field=models.TextField(blank=True, editable=False),
        ),
        migrations.AddField(
            model_name='crawl',
            name='robots_failures',
            field=models.JSONField(blank=True, default=dict, editable=False),
        ),
    ]
