# Queue-server rows carry their registration (issue 34, item 5): the heartbeat's HMAC of the
# server's number and url under a key derived from the shared token. Existing rows have none:
# a search sends them the shard token again only after their queue server's next heartbeat
# (every few seconds while it runs).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('crawler', '0024_crawl_public'),
    ]

    operations = [
        migrations.AddField(
            model_name='queueserver',
            name='registration',
            field=models.CharField(blank=True, default='', editable=False, max_length=64),
        ),
    ]
