from django.db import migrations


def create_default(apps, schema_editor):
    PageOptions = apps.get_model("crawler", "PageOptions")
    if not PageOptions.objects.filter(is_default=True).exists():
        PageOptions.objects.create(
            name="Default",
            description="The seed document's defaults.",
            is_default=True,
        )


class Migration(migrations.Migration):
    dependencies = [("crawler", "0001_initial")]
    operations = [migrations.RunPython(create_default, migrations.RunPython.noop)]
