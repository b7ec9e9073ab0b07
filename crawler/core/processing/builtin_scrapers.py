"""The scrapers that ship with the engine: Drupal, MediaWiki, vBulletin, WordPress and pages
that say with Open Graph meta tags that they hold a video.

Layer: ``crawler.core``. The seed's "Fetchers and their Effect on Search Ranking" names these
five: when a page matches a scraper's signature, only its Text XPath is summarised and indexed,
less its Delete XPaths, and the scraper may add fields and meta words (the admin's scrapers work
the same way, :mod:`.scrapers`). Each one here:

* recognises its pages by what the software writes in every page (the ``generator`` meta, the
  body's classes, element ids, the paths of its assets, ``og:type``), with a CSS selector of
  ``candidates`` that every page its signature matches satisfies (the signature without its
  position tests and with substring tests for class tokens: a superset), so that other pages
  are never parsed by lxml for it (:meth:`.scrapers.ScraperSet.may_match`);
* keeps the main content (the node, the article, the posts of a thread, the wiki text) and
  drops what surrounds or interrupts it: comments and comment forms, edit links, tables of
  contents, navigation boxes, signatures, share buttons, related posts;
* adds ``scraper:<name>`` (every scraper does) and its own fields and meta words: the video
  scraper adds ``media:video``, ``og:<type>`` and the ``duration:`` words of the video's
  length, and keeps the video's url, image, site, length and release date as fields.

They are defined in code and used by every crawl (:meth:`PageProcessingConfig.from_options
<crawler.core.processing.config.PageProcessingConfig.from_options>` adds them), below the admin's
scrapers (their priorities are negative, the admin's start at 0). A Page Options profile turns
one off by name (``disabled_builtin_scrapers``), and an admin scraper the profile uses with the
same name (letter case aside) or the same signature replaces it (:func:`with_builtins`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from crawler.core.processing.scrapers import ScraperConfig


def _has_class(name: str) -> str:
    """XPath test: the element's class attribute holds the token ``name``."""
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


def _generator(product: str) -> str:
    """XPath of a ``<meta name="generator">`` whose content names ``product``. Signatures
    look in the head and at the root and body elements only, never through the whole page:
    every page is tested against every signature."""
    return (f"/html/head/meta[translate(@name, 'GENRATO', 'genrato')='generator']"
            f"[contains(@content, '{product}')]")


DRUPAL = ScraperConfig(
    name="Drupal",
    signature=(f"{_generator('Drupal')} | "
               "/html/head/link[contains(@href, '/sites/default/files/')] | "
               f"/html/body[{_has_class('node-type-article')} or {_has_class('path-node')}]"),
    candidates=('meta[content*="Drupal"], link[href*="/sites/default/files/"], '
                'body[class*="node-type-article"], body[class*="path-node"]'),
    priority=-70,
    text_path=(f"//main | //*[@id='content'] | //*[{_has_class('region-content')}]"),
    delete_paths=(
        f"//*[@id='comments'] | //*[{_has_class('comment-wrapper')}] | "
        f"//section[{_has_class('comments')}] | //*[{_has_class('field--name-comment')}]",
        f"//*[{_has_class('breadcrumb')}] | //*[{_has_class('tabs')}]",
        f"//ul[{_has_class('links')}] | //*[{_has_class('node__links')}]",
        f"//*[{_has_class('submitted')}] | //*[{_has_class('node__meta')}]",
        f"//*[{_has_class('visually-hidden')}] | //*[{_has_class('element-invisible')}]",
        "//form",
    ),
    extract_fields=(
        ("AUTHOR", f"((//*[{_has_class('submitted')}] | //*[{_has_class('node__meta')}])"
                   "//*[@rel='author' or @typeof='schema:Person' or "
                   f"{_has_class('username')}])[1]"),
        ("TAGS", f"//*[{_has_class('field--name-field-tags')} or "
                 f"{_has_class('field-name-field-tags')}]//a"),
    ),
)

MEDIAWIKI = ScraperConfig(
    name="MediaWiki",
    signature=f"{_generator('MediaWiki')} | /html/body[{_has_class('mediawiki')}]",
    candidates='meta[content*="MediaWiki"], body[class*="mediawiki"]',
    priority=-60,
    text_path="//*[@id='mw-content-text']",
    delete_paths=(
        f"//*[@id='toc'] | //*[{_has_class('toc')}] | //*[{_has_class('mw-editsection')}]",
        f"//*[{_has_class('navbox')}] | //*[{_has_class('metadata')}] | "
        f"//*[{_has_class('noprint')}] | //*[{_has_class('mw-jump-link')}]",
        f"//sup[{_has_class('reference')}] | //*[{_has_class('mw-references-wrap')}] | "
        f"//ol[{_has_class('references')}]",
        f"//*[{_has_class('printfooter')}] | //*[@id='catlinks']",
    ),
    extract_fields=(
        ("CATEGORIES", "//*[@id='catlinks']//*[@id='mw-normal-catlinks']//li"),
    ),
)

VBULLETIN = ScraperConfig(
    name="vBulletin",
    signature=(f"{_generator('vBulletin')} | /html/body[@id='vb-page-body'] | "
               "/html[@id='vbulletin_html']"),
    candidates='meta[content*="vBulletin"], body[id="vb-page-body"], html[id="vbulletin_html"]',
    priority=-60,
    text_path=f"//*[@id='posts'] | //*[{_has_class('conversation-list')}]",
    delete_paths=(
        f"//*[{_has_class('signature')}] | //*[{_has_class('signaturecontainer')}]",
        f"//*[{_has_class('userinfo')}] | //*[{_has_class('postdetails_noavatar')}] | "
        f"//*[{_has_class('userinfo_noavatar')}] | //*[{_has_class('b-userinfo')}]",
        f"//*[{_has_class('posthead')}] | //*[{_has_class('postfoot')}] | "
        f"//*[{_has_class('postfoot_container')}] | //*[{_has_class('b-post__footer')}]",
        f"//*[{_has_class('after_content')}] | //*[{_has_class('quickreply')}] | //form",
    ),
    extract_fields=(
        # the thread title alone if marked, else the page title's heading ("Thread: ...")
        ("THREAD", f"(//*[@id='pagetitle']//h1 | //*[{_has_class('threadtitle')}])[last()]"),
        ("POSTERS", f"//*[@id='posts']//*[{_has_class('username')}]"),
    ),
)

_POSTS = f"//article[{_has_class('hentry')} or starts-with(@id, 'post-')]"

WORDPRESS = ScraperConfig(
    name="WordPress",
    signature=(f"{_generator('WordPress')} | /html/head/link[@rel='https://api.w.org/'] | "
               "/html/head/link[contains(@href, '/wp-content/') or "
               "contains(@href, '/wp-includes/')]"),
    candidates=('meta[content*="WordPress"], link[rel="https://api.w.org/"], '
                'link[href*="/wp-content/"], link[href*="/wp-includes/"]'),
    priority=-70,
    # one post: its article; a list of posts (the blog's home, an archive): the main column
    # that holds them; a block theme without articles: the post's content. Posts are the
    # articles WordPress marks as entries (hentry, id post-N), not the comments' articles.
    text_path=(f"{_POSTS}[count({_POSTS}) = 1] | "
               f"//main[count({_POSTS}) > 1] | //*[@id='main'][count({_POSTS}) > 1] | "
               f"//*[{_has_class('entry-content')}][count({_POSTS}) = 0]"),
    delete_paths=(
        f"//*[@id='comments'] | //*[{_has_class('comments-area')}] | //*[@id='respond']",
        f"//*[{_has_class('sharedaddy')}] | //*[{_has_class('jp-relatedposts')}] | "
        f"//*[{_has_class('wp-block-buttons')}] | //*[{_has_class('post-navigation')}]",
        f"//*[{_has_class('entry-footer')}] | //*[{_has_class('entry-meta')}] | "
        f"//*[{_has_class('screen-reader-text')}]",
    ),
    extract_fields=(
        ("AUTHOR", f"//*[{_has_class('byline')}]//a[1] | //a[@rel='author'][1]"),
        ("PUBLISHED", f"//time[{_has_class('entry-date')}]/@datetime"),
        ("CATEGORIES", "//a[contains(concat(' ', normalize-space(@rel), ' '), ' category ')]"),
        ("TAGS", "//a[@rel='tag']"),
    ),
)


def _og(name: str) -> str:
    """XPath of the content of the Open Graph meta tag ``name`` (property= or name=)."""
    return f"//meta[@property='{name}' or @name='{name}']/@content"


OPEN_GRAPH_VIDEO = ScraperConfig(
    name="Open Graph video",
    signature=("/html/head/meta[@property='og:type' or @name='og:type']"
               "[starts-with(@content, 'video')]"),
    candidates='meta[property="og:type"][content^="video"], meta[name="og:type"][content^="video"]',
    priority=-50,
    # the page's main part, else the video's schema.org item, else the whole page
    text_path=("//main | //*[@role='main'] | "
               "//*[@itemtype][contains(@itemtype, 'VideoObject')]"),
    delete_paths=(
        f"//*[@id='comments'] | //*[{_has_class('comments')}] | //*[@id='related'] | "
        f"//*[{_has_class('related-videos')}]",
    ),
    extract_fields=(
        ("VIDEO_URL", f"({_og('og:video:secure_url')} | {_og('og:video:url')} | "
                      f"{_og('og:video')})[1]"),
        ("THUMBNAIL", f"({_og('og:image')})[1]"),
        ("SITE_NAME", f"({_og('og:site_name')})[1]"),
        ("DURATION", f"({_og('video:duration')} | //*[@itemprop='duration']/@content)[1]"),
        ("RELEASE_DATE", f"({_og('video:release_date')})[1]"),
    ),
    meta_words=(
        ("media", ":=video"),
        ("og", f"{_og('og:type')}"),
        ("duration", f"{_og('video:duration')} | //*[@itemprop='duration']/@content"),
    ),
)

BUILTIN_SCRAPERS: tuple[ScraperConfig, ...] = (DRUPAL, MEDIAWIKI, VBULLETIN, WORDPRESS,
                                               OPEN_GRAPH_VIDEO)
BUILTIN_NAMES: tuple[str, ...] = tuple(s.name for s in BUILTIN_SCRAPERS)


def builtin_scraper(name: str) -> ScraperConfig | None:
    """The built-in scraper called ``name`` (letter case aside), or None."""
    key = name.strip().casefold()
    return next((s for s in BUILTIN_SCRAPERS if s.name.casefold() == key), None)


def _signature_key(signature: str) -> str:
    return " ".join(signature.split())


def with_builtins(own: Sequence[ScraperConfig], disabled: Iterable[str] = ()
                  ) -> tuple[ScraperConfig, ...]:
    """The scrapers a crawl uses: ``own`` (the admin's, as the profile chose them), then each
    built-in scraper that is not named in ``disabled`` (letter case aside) and not replaced by
    one of ``own`` with the same name (letter case aside) or the same signature (spacing
    aside)."""
    off = {name.strip().casefold() for name in disabled}
    names = {s.name.strip().casefold() for s in own}
    signatures = {_signature_key(s.signature) for s in own}
    kept = [s for s in BUILTIN_SCRAPERS
            if s.name.casefold() not in off and s.name.casefold() not in names
            and _signature_key(s.signature) not in signatures]
    return (*own, *kept)


def overridden_by(builtin: ScraperConfig, own: Sequence[ScraperConfig]) -> str | None:
    """The name of the scraper of ``own`` that replaces ``builtin``, or None."""
    for scraper in own:
        if scraper.name.strip().casefold() == builtin.name.casefold() or \
                _signature_key(scraper.signature) == _signature_key(builtin.signature):
            return scraper.name
    return None
