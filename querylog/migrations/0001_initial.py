# The QueryLog model moved here from the ranking app. Its table (ranking_querylog) is the one
# ranking's first migration created: this migration only takes the model into this app's
# state, and ranking's 0002 drops it from ranking's, so the rows are kept.

from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('ranking', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='QueryLog',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('query', models.CharField(db_index=True, max_length=512)),
                        ('results', models.PositiveIntegerField(default=0)),
                        ('top_scores', models.JSONField(default=list)),
                        ('mean_top_score', models.FloatField(default=0.0)),
                        ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                    ],
                    options={
                        'db_table': 'ranking_querylog',
                        'ordering': ['-created_at'],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
