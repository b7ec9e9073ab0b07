# A crawl keeps its failed page downloads by kind (with an example of each); a fetcher process
# reports its rate; the Machines page gets its place in the admin's menu (issue 19).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('crawler', '0017_hosts_and_urls'),
    ]

    operations = [
        migrations.AddField(
            model_name='crawl',
            name='fetch_error_kinds',
            field=models.JSONField(blank=True, default=dict, editable=False),
        ),
        migrations.AddField(
            model_name='fetcher',
            name='pages_per_second',
            field=models.FloatField(default=0.0),
        ),
        migrations.CreateModel(
            name='Machine',
            fields=[],
            options={
                'verbose_name': 'machine',
                'verbose_name_plural': 'machines',
                'proxy': True,
                'indexes': [],
                'constraints': [],
            },
            bases=('crawler.fetcher',),
        ),
    ]
