"""The search pages in every shipped language (issue 37): each catalog under locale/ translates
every message of the search site's templates and of the search messages, and each page,
rendered in each language, shows none of the English texts. The language comes from the
browser's Accept-Language, Django's language cookie (the footer's switch, the settings page),
else English; Django's own admin follows it."""

from __future__ import annotations

import gettext
import html
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.template.base import Lexer, TokenType
from django.utils import translation
from django.utils.translation.template import templatize

from crawler.models import NewsSource
from crawler.news.updates import news_update_due
from ranking.search_service import search_service
from ranking.searchpage.media import DURATION_LABELS, SIZE_LABELS, TAB_LABELS
from ranking.searchpage.messages import LABEL_WORDS, PATTERNS
from ranking.searchpage.views import PERIOD_LABELS
from tests.web.dated_site import build_dated_index
from tests.web.news_feeds import feed_server, rss

pytestmark = pytest.mark.django_db
TEMPLATES = ("ranking/base.html", "ranking/_form.html", "ranking/search.html",
             "ranking/settings.html", "ranking/cache.html", "ranking/similar.html",
             "ranking/site_status.html", "ranking/near_duplicates.html",
             "admin/base_site.html")
SHIPPED = [code for code, _ in settings.LANGUAGES if code != "en"]
_LITERAL = r"u'((?:[^'\\]|\\.)*)'"
_CALL = re.compile(rf"\b(n?p?gettext)\(({_LITERAL}(?:, {_LITERAL})*)")


def template_messages() -> set[tuple[str | None, str, str | None]]:
    """(context, msgid, plural msgid) of every {% translate %} and {% blocktranslate %} of the
    search site's templates, as makemessages reads them (Django's templatize)."""
    found = set()
    for name in TEMPLATES:
        source = (Path(settings.BASE_DIR) / "templates" / name).read_text(encoding="utf-8")
        for call in _CALL.finditer(templatize(source)):
            literals = [bytes(s, "utf-8").decode("unicode_escape").encode("latin-1")
                        .decode("utf-8") for s in re.findall(_LITERAL, call.group(2))]
            kind = call.group(1)
            context = literals.pop(0) if kind.startswith(("pgettext", "npgettext")) else None
            plural = literals[1] if kind.startswith(("ngettext", "npgettext")) else None
            found.add((context, literals[0], plural))
    assert len(found) > 80, len(found)  # the walk found the templates' messages
    return found


def code_messages() -> set[tuple[None, str, None]]:
    """The messages the search pages show from Python: the search messages' forms, the
    index labels' words, the time periods and the tabs with their filters."""
    forms = [form for _, form in PATTERNS] + [form for _, form in LABEL_WORDS] + \
        list(PERIOD_LABELS.values()) + list(TAB_LABELS.values()) + \
        list(SIZE_LABELS.values()) + list(DURATION_LABELS.values())
    with translation.override(None):  # no catalog: each lazy form gives its msgid
        return {(None, str(form), None) for form in forms}


def catalog(language: str) -> dict:
    """The compiled catalog shipped for ``language`` (its entries only, not Django's)."""
    path = Path(settings.BASE_DIR) / "locale" / language / "LC_MESSAGES" / "django.mo"
    with path.open("rb") as handle:
        return gettext.GNUTranslations(handle)._catalog


@pytest.mark.parametrize("language", SHIPPED)
def test_every_message_is_translated(language):
    translated = catalog(language)
    missing = []
    for context, msgid, plural in template_messages() | code_messages():
        key = f"{context}\x04{msgid}" if context else msgid
        if plural is not None:
            if not all(translated.get((key, n)) for n in (0, 1)):
                missing.append(msgid)
        elif not translated.get(key):
            missing.append(msgid)
    assert not missing, f"{language}: {len(missing)} untranslated: {missing[:5]}"


# words a template may show untranslated: names of formats
UNTRANSLATED_WORDS = {"RSS", "JSON"}
SHOWN_ATTRIBUTES = re.compile(r'\b(?:aria-label|title|alt|placeholder)="([^"]*)"')


def literal_text(source: str) -> str:
    """A template's text with every tag, variable and translated message replaced by "§"
    and its comments dropped: what it would show in every language alike."""
    out: list[str] = []
    depth = 0  # inside {% blocktranslate %} ... {% endblocktranslate %}
    commented = False  # inside {% comment %} ... {% endcomment %}
    for token in Lexer(source).tokenize():
        word = token.contents.split()[0] if token.contents.split() else ""
        if token.token_type == TokenType.BLOCK and word in ("comment", "endcomment"):
            commented = word == "comment"
        elif commented:
            continue
        elif token.token_type == TokenType.BLOCK and word in ("blocktranslate", "blocktrans"):
            depth += 1
        elif token.token_type == TokenType.BLOCK and word in ("endblocktranslate",
                                                             "endblocktrans"):
            depth -= 1
            out.append("§")
        elif token.token_type == TokenType.TEXT and not depth:
            out.append(token.contents)
        elif token.token_type != TokenType.COMMENT and not depth:
            out.append("§")
    return "".join(out)


@pytest.mark.parametrize("name", TEMPLATES)
def test_templates_show_no_text_outside_translation_tags(name):
    """A text a template shows must be a message the catalogs translate: none is written
    in a template outside {% translate %} / {% blocktranslate %}."""
    text = literal_text((Path(settings.BASE_DIR) / "templates" / name).read_text("utf-8"))
    shown = " ".join(SHOWN_ATTRIBUTES.findall(text))
    text = re.sub(r"<script\b.*?</script>|<style\b.*?</style>", " ", text, flags=re.S)
    shown += " " + re.sub(r"<[^>]*>", " ", text)
    words = set(re.findall(r"[^\W\d_]{2,}", shown)) - UNTRANSLATED_WORDS
    assert not words, (name, sorted(words))


@pytest.mark.parametrize("language", SHIPPED)
def test_translations_keep_every_placeholder_and_tag(language):
    translated = catalog(language)
    for context, msgid, plural in template_messages() | code_messages():
        key = f"{context}\x04{msgid}" if context else msgid
        forms = [translated[(key, 0)], translated[(key, 1)]] if plural else [translated[key]]
        for form in forms:
            assert sorted(set(re.findall(r"%\(\w+\)s", form))) == \
                sorted(set(re.findall(r"%\(\w+\)s", msgid))), (language, msgid)
            assert sorted(re.findall(r"<[^>]+>", form)) == \
                sorted(re.findall(r"<[^>]+>", msgid)), (language, msgid)


def english_phrases(language: str) -> set[str]:
    """The English texts a page in ``language`` must not show: the runs of two or more words
    of every message, outside placeholders and tags, that its translation does not hold."""
    phrases = set()
    with translation.override(language):
        for context, msgid, plural in template_messages() | code_messages():
            own = (translation.pgettext(context, msgid) if context else
                   translation.ngettext(msgid, plural, 2) if plural else
                   translation.gettext(msgid))
            for run in re.split(r"%\(\w+\)s|<[^>]+>", msgid):
                run = run.strip(" .,:;()?·–")
                if len(run.split()) >= 2 and run not in own and run not in TECHNICAL:
                    phrases.add(run)
    return phrases


# texts every language shows as they are (the query syntax's examples)
TECHNICAL = {"site:example.com", "filetype:pdf"}


@pytest.fixture
def dated(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    search_service().lexicons.clear()
    build_dated_index(tmp_path)
    yield tmp_path
    search_service().pool.close()
    search_service().lexicons.clear()


PAGES = ["/", "/?q=lighthouse", "/?q=lighthouse&t=week&num=5&limit=5", "/?q=history&t=week",
         "/?q=zzqqxx", "/?q=lighthouse+%22unclosed", "/?q=lighthouse&num=abc&its=x",
         "/settings", "/cache?url=http%3A%2F%2Fnew.example.test%2Fkeeper%2F0.html&q=lamp",
         "/cache?url=ftp%3A%2F%2Fx", "/similar?url=http%3A%2F%2Fnowhere.example.test%2F"]


MEDIA_PAGES = ["/?q=lighthouse&tab=images", "/?q=lighthouse&tab=images&size=large",
               "/?q=lighthouse&tab=videos", "/?q=lighthouse&tab=videos&duration=long",
               "/?q=zzqqxx&tab=images"]


@pytest.mark.parametrize("language", SHIPPED)
def test_pages_show_no_english_in_each_language(client, dated, language):
    shows_no_english(client, language, PAGES)


@pytest.mark.parametrize("language", SHIPPED)
def test_media_tabs_show_no_english_in_each_language(client, media, language):
    shows_no_english(client, language, MEDIA_PAGES)


@pytest.mark.parametrize("language", SHIPPED)
def test_news_tab_shows_no_english_in_each_language(client, search_work, language):
    shows_no_english(client, language, ["/?q=lighthouse&tab=news"])  # no news yet
    with feed_server() as server:
        url = server.serve("/news.rss", rss("Harbour", [
            ("Lighthouse keeper retires", server.url("/a"), "The lighthouse keeper.", 1.7e9)]))
        NewsSource.objects.create(name="Harbour Gazette", url=url)
        assert news_update_due().indexed == 1
    shows_no_english(client, language, ["/?q=lighthouse&tab=news", "/?q=zzqqxx&tab=news",
                                         "/?q=lighthouse&tab=news&limit=10"])


def shows_no_english(client, language: str, pages: list[str]) -> None:
    phrases = english_phrases(language)
    assert len(phrases) > 50
    for url in pages:
        response = client.get(url, HTTP_ACCEPT_LANGUAGE=language)
        assert response.status_code in (200, 400, 404), url
        page = html.unescape(response.content.decode())
        assert f'<html lang="{language}">' in page, url
        shown = [p for p in phrases if p in page]
        assert not shown, (language, url, shown[:5])


def test_language_from_the_browser_the_cookie_and_the_switch(client, dated):
    assert '<html lang="de">' in client.get(
        "/", HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9,en;q=0.5").content.decode()
    assert '<html lang="fr">' in client.get("/", HTTP_ACCEPT_LANGUAGE="fr-CA").content.decode()
    assert '<html lang="en">' in client.get("/", HTTP_ACCEPT_LANGUAGE="pt-BR").content.decode()
    assert '<html lang="en">' in client.get("/").content.decode()
    switched = client.post("/i18n/setlang/", {"language": "es", "next": "/?q=lighthouse"})
    assert switched.status_code == 302 and switched["Location"] == "/?q=lighthouse"
    page = client.get("/?q=lighthouse", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert '<html lang="es">' in page and "Resultados 1–10 de 15" in page
    assert client.post("/i18n/setlang/", {"language": "xx", "next": "/"}).status_code == 302


@pytest.mark.parametrize("language, word", [("de", "Benutzername"), ("fr", "Nom d’utilisateur"),
                                            ("es", "Nombre de usuario")])
def test_djangos_admin_follows_the_language(client, admin_client, language, word):
    login = client.get("/admin/login/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert word in login
    index = admin_client.get("/admin/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    with translation.override(language):
        assert translation.gettext("Crawls, search index and machines") in index
        assert translation.gettext("%(name)s administration") % {"name": "Yioopy"} in index
