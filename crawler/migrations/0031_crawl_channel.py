# Issue 37, item 7: several crawls active at once, each on a channel. The boolean active_lock
# (unique: one active crawl) becomes the crawl's channel number (unique: one crawl per
# channel); the crawl active when this runs, if any, is on channel 0.

from django.db import migrations, models


def lock_to_channel(apps, schema_editor):
    Crawl = apps.get_model("crawler", "Crawl")
    Crawl.objects.filter(active_lock=True).update(channel=0)


def channel_to_lock(apps, schema_editor):
    Crawl = apps.get_model("crawler", "Crawl")
    first = Crawl.objects.filter(channel__isnull=False).order_by("channel").first()
    if first is not None:
        Crawl.objects.filter(pk=first.pk).update(active_lock=True)


class Migration(migrations.Migration):

    dependencies = [
        ("crawler", "0030_news_sources"),
    ]

    operations = [
        migrations.AddField(
            model_name="crawl",
            name="channel",
            field=models.PositiveSmallIntegerField(
                default=None, editable=False, null=True, unique=True,
                help_text="The channel of an active crawl: crawls on different channels run at "
                          "the same time, each with its own queue and index."),
        ),
        migrations.RunPython(lock_to_channel, channel_to_lock),
        migrations.RemoveField(model_name="crawl", name="active_lock"),
    ]
