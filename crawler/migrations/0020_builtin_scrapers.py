"""The built-in scrapers (crawler.core.processing.builtin_scrapers): each Page Options profile may
turn some off (by name; none is off by default, so every profile uses them), and a scraper may add
meta words."""

from django.db import migrations, models

import crawler.validators


class Migration(migrations.Migration):

    dependencies = [
        ('crawler', '0019_crawl_freshness_and_repeats'),
    ]

    operations = [
        migrations.AddField(
            model_name='pageoptions',
            name='disabled_builtin_scrapers',
            field=models.JSONField(blank=True, default=list, help_text="Names of the built-in scrapers (Drupal, MediaWiki, vBulletin, WordPress, Open Graph video) this profile does not use; the others are used, below the profile's own scrapers.", validators=[crawler.validators.validate_builtin_scraper_names], verbose_name='built-in scrapers turned off'),
        ),
        migrations.AddField(
            model_name='scraper',
            name='meta_words',
            field=models.TextField(blank=True, help_text='One per line: prefix=xpath (each match becomes the meta word prefix:value) or prefix:=value, with a prefix queries know (media, og, duration, class...). Pages the scraper reads also get scraper:NAME.', validators=[crawler.validators.validate_meta_words]),
        ),
        migrations.AlterField(
            model_name='pageoptions',
            name='scrapers',
            field=models.ManyToManyField(blank=True, help_text='Scrapers this profile may use; the highest-priority matching one wins. One named like a built-in scraper, or with its signature, replaces it.', related_name='page_options', to='crawler.scraper'),
        ),
    ]
