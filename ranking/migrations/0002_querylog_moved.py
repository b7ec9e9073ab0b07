# QueryLog moved to the querylog app, which keeps its table (ranking_querylog) and rows: only
# the model leaves this app's state.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('ranking', '0001_initial'),
        ('querylog', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='QueryLog'),
            ],
            database_operations=[],
        ),
    ]
