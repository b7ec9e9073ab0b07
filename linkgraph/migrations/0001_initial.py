# The LinkAnalysis model moves from the crawler app to this one. Its table keeps its name
# (crawler_linkanalysis) and its rows: only the migration state changes here; the crawler's
# 0014 removes the model from its own state.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('crawler', '0013_pageoptions_byte_range_4mb'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='LinkAnalysis',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('state', models.CharField(choices=[('idle', 'Idle'), ('queued', 'Queued'), ('running', 'Running')], default='idle', max_length=10)),
                        ('rerun', models.BooleanField(default=False)),
                        ('reason', models.CharField(blank=True, max_length=100)),
                        ('requested_at', models.DateTimeField(blank=True, null=True)),
                        ('pages_at_request', models.BigIntegerField(default=0)),
                        ('run_started_at', models.DateTimeField(blank=True, null=True)),
                        ('heartbeat_at', models.DateTimeField(blank=True, null=True)),
                        ('stage', models.CharField(blank=True, max_length=20)),
                        ('stage_done', models.BigIntegerField(default=0)),
                        ('stage_total', models.BigIntegerField(default=0)),
                        ('last_started_at', models.DateTimeField(blank=True, null=True)),
                        ('last_finished_at', models.DateTimeField(blank=True, null=True)),
                        ('last_outcome', models.CharField(blank=True, choices=[('', 'Never run'), ('ok', 'OK'), ('failed', 'Failed')], default='', max_length=10)),
                        ('last_error', models.TextField(blank=True)),
                        ('last_pages', models.BigIntegerField(default=0)),
                        ('last_urls', models.BigIntegerField(default=0)),
                        ('last_edges', models.BigIntegerField(default=0)),
                        ('last_seconds', models.FloatField(default=0.0)),
                        ('last_shards', models.JSONField(blank=True, default=list)),
                        ('runs', models.PositiveIntegerField(default=0)),
                        ('crawl', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='link_analysis', to='crawler.crawl')),
                    ],
                    options={
                        'db_table': 'crawler_linkanalysis',
                    },
                ),
            ],
        ),
    ]
