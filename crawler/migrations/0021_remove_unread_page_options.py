"""Page Options that nothing read: ``user_rank_bonus`` (no classifier scores exist to multiply)
and ``show_ip_address`` (no search page element showed addresses)."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('crawler', '0020_builtin_scrapers'),
    ]

    operations = [
        migrations.RemoveField(
            model_name='pageoptions',
            name='show_ip_address',
        ),
        migrations.RemoveField(
            model_name='pageoptions',
            name='user_rank_bonus',
        ),
    ]
