# The LinkAnalysis model moved to the linkgraph app (linkgraph 0001 takes it over with its
# table, crawler_linkanalysis, and its rows): removed from this app's state only.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('crawler', '0013_pageoptions_byte_range_4mb'),
        ('linkgraph', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(name='LinkAnalysis'),
            ],
        ),
    ]
