"""Per-language word lists: the most frequent (function) words of each language.

Layer: ``indexer.core.text`` (pure data). Two users:

* :mod:`.language` guesses a text's language by deleting each language's frequent words from a
  sample and picking the language that leaves the least text (the seed document's rule);
* :mod:`.stopwords` uses the same lists as stop words (link text, query clean-up).

Lists hold function words and a few domain-neutral very frequent words, so that they also work
as stop words. For scripts written without spaces (Chinese, Japanese, Thai) the entries are
frequent characters and short character strings, which are deleted as substrings rather than as
whole words. Simplified and traditional Chinese have their own lists, so the text test tells
zh-CN from zh-TW. Compiled by hand for this project.
"""

from __future__ import annotations

# Languages whose words are separated by spaces: entries are whole words, matched after the
# text is lower-cased.
SPACED: dict[str, str] = {
    "en": """the of and to a in is it that for you was with on as have are be at this not
        but by from or an they which one all were we there can had her his has their if will
        what would so when no more about out up do who been its into than them only could some
        these other then him my your our may should also any how such our each most over very
        just those both where after because while between same through under being does did
        here""",
    "de": """der die und in den von zu das mit sich des auf für ist im dem nicht ein eine als
        auch es an werden aus er hat dass sie nach wird bei einer um am sind noch wie einem über
        einen so zum war haben nur oder aber vor zur bis mehr durch man sein wurde sei kann
        diese dieser dieses wenn ich können sollte werden muss müssen wir ihr ihre ihren
        keine kein unter gegen alle allem ob bereits dann da denn wo was wie hier sowie
        beim vom zwischen ohne jedoch damit also nun soll sehr immer Datei Dateien Befehl
        verwenden wird werden siehe""",
    "fr": """de la le et les des en un une du est que à il pour dans qui par sur au ne pas se
        plus ce sont avec ou son sa ses aux été cette mais comme elle tout nous vous ils on
        leur leurs être fait peut y a ont lui même entre sans ces deux donc dont aussi très
        bien si où tous toutes quand ainsi avoir alors car depuis après avant chez encore
        autre autres peu selon sous lors elles celui celle ceux cela ceci voici faire doit
        fichier fichiers commande utiliser utilisez exemple suivante votre vos notre l d qu
        n s c j m""",
    "es": """de la que el en y los del se las por un para con no una su al lo como más pero
        sus le ya o este sí porque esta entre cuando muy sin sobre también me hasta hay donde
        quien desde todo nos durante todos uno les ni contra otros ese eso ante ellos e esto
        mí antes algunos qué unos yo otro otras otra él tanto esa estos mucho quienes nada
        muchos cual poco ella estar estas algunas algo nosotros es son está están ser fue
        puede pueden debe hace tiene tienen usted cada archivo archivos comando utilizar
        ejemplo siguiente""",
    "it": """di e il la che in a per è un del non una con i le si da al dei della sono alla
        gli lo come più ma anche nel delle se ha dal questo ci o essere suo sua nella degli
        tra quando cui io loro ad tutti stato questa fa può già ne sul dopo sia molto sempre
        perché così senza hanno nei ogni quello qui solo quale quali ancora fino dove mentre
        tutto tutte questi queste quella stesso verso poi dell nell sull all dall viene
        vengono deve possono essere file comando utilizzare esempio seguente""",
    "pt": """de a o que e do da em um para é com não uma os no se na por mais as dos como mas
        foi ao ele das tem à seu sua ou ser quando muito há nos já está eu também só pelo pela
        até isso ela entre era depois sem mesmo aos ter seus quem nas me esse eles estão você
        essa num nem suas meu às minha têm numa pelos elas seja qual será nós lhe deles essas
        esses pelas este dele isto pode podem deve são ficheiro ficheiros arquivo arquivos
        comando utilizar exemplo seguinte sobre onde cada todos através usando pode
        também""",
    "nl": """de en van het een in is dat op te zijn met voor niet aan er die om ook als dan
        maar bij of uit nog wat zo naar door over ze zich hij heeft hebben worden wordt werd
        kan kunnen moet moeten al deze dit na tot u uw wij we ik je jij zal zou onder
        tegen geen meer wel veel hier daar waar toch omdat alleen want bestand commando""",
    "sv": """och i att det som en på är av för med till den har de inte om ett han men var
        jag sig från vi så kan man när år säger hon under också efter eller nu sin där vid
        mot ska skulle kommer ut får finns vara hade alla andra mycket än här då sedan över
        bara in blir upp även vad få två vill ha många hur mer går sina""",
    "da": """og i at det er en til på som de med han af for ikke der var mig sig men et har om
        vi min havde ham hun nu over da fra du ud sin dem os op man hans hvor eller hvad skal
        selv her alle vil blev kunne ind når være dog noget ville jo deres efter ned skulle
        denne end dette mit også under have dig anden hende mine alt meget sit sine vor""",
    "no": """og i det på som er en til å han av for med at var de ikke den har jeg om et men
        så seg hun hadde fra vi du kan da ble ut skal opp til være vil meg oss etter der
        sin sine når bare eller hva også noe inn hvor mot dette disse kunne ville blir""",
    "fi": """ja on ei se että hän oli ovat mutta kun niin myös joka jos tai kuin sen hänen
        ole olla ne nyt vain mitä tämä siitä jo sitä tässä voi sitten olen kanssa mukaan
        vielä tätä koska jälkeen kaikki sekä tämän mikä jotka ovat olisi nämä siinä""",
    "pl": """i w na z do nie się że to jest o jak a po co ale od za tak dla są czy jego ich
        przez jej już może być tylko jako pod by ten jednak było przy także bardzo lub oraz
        tym go tego kiedy który która które którzy gdy także jeszcze można tej będzie""",
    "cs": """a se na v je že to s z do o k i jako ale by pro tak po jsou jeho které který
        která byl být jsem od za také jen už nebo když bude jak při může však aby tím ze
        této tento toto mezi pouze""",
    "ru": """и в не на я что тот быть с он а весь это как она по но они к у ты из мы за вы
        так же от сказать этот который мочь человек о один еще бы такой только себя свое
        какой когда уже для вот кто да говорить год знать мой до или если время рука нет
        самый ни стать большой даже другой наш свой ну под где дело есть сам раз чтобы два
        там чем глаз жизнь первый день тоже при его ее их был была были будет это""",
    "uk": """і в не на що з та до я у як це він а за але так від його ми про по вона же її
        вони їх бути був була було для то також коли або ще тільки який яка які""",
    "tr": """ve bir bu da de için ile olarak çok daha o en gibi ama ne sonra kadar her olan
        ya veya ki var olduğu ise şey mi diye değil ben sen biz siz onlar bunu şu tüm
        göre ancak değildir olan bunun""",
    "hu": """a az és hogy nem is egy meg van de ez csak már el volt mint még ki azt fel vagy
        ha kell lesz amely aki sem után most mert így pedig ezt között minden nagyon
        ahol itt más""",
    "ro": """și în de a la cu pe că nu o un se din este pentru care mai sau ca ce au fi fost
        după prin sunt dar acest această al ale lui ei el ea sa său când până doar""",
    "el": """και το να του η της την με σε που ο για τα είναι των τη από στο δεν τον θα οι
        στην ως στη ένα μια στα αλλά ή όταν αν πως όπως μετά""",
    "ar": """في من على أن إلى عن مع هذا هذه التي الذي كان ما لا أو كل بين قد ثم بعد إن
        هو هي عند كما لم حتى ذلك تلك أي غير أيضا وقد وهو وفي""",
    "fa": """و در به از که این را با است برای آن یک تا می بر هم شود کرد شده نیز ها بود
        کند ای یا اما اگر هر باید""",
    "he": """של את על הוא לא זה עם כי גם היא אם או כל מה יש אבל הם היה רק בין אני""",
    "hi": """के है में की और को से का एक पर यह भी हैं कि लिए था ने तो इस कर नहीं जो
        हो गया वह कुछ किया होता साथ""",
    "id": """yang dan di dari ini itu dengan untuk tidak dalam ke akan pada juga ada adalah
        oleh atau saya karena bisa sudah mereka kami kita seperti telah lebih""",
    "vi": """và của là có các trong được cho không một những với người này đã để khi đến
        từ cũng như thì theo về nhiều nhưng sẽ tại hay ra""",
    "ca": """de la i el a que en les per és els del amb un una no es al com més però seu
        seva també són ha si aquest aquesta dels entre quan molt pel sobre""",
    "ko": """이 그 저 것 수 등 및 를 을 는 은 가 에 의 로 으로 에서 하는 있는 있다 한다
        된다 하고 그리고 또는 대한 위한""",
}

# Languages written without spaces: entries are characters or short strings, deleted as
# substrings.
UNSPACED: dict[str, str] = {
    "zh-CN": """的 是 在 了 不 和 有 中 这 个 们 为 来 上 以 到 说 时 要 就 会 可 也 对 于
        着 下 之 过 发 后 里 用 种 经 么 学 现 当 没 动 还 进 样 实 开 从 与 将 该 并 被 或
        把 让 使 如 果 所 其 这些 那些 可以 如果 使用 没有 我们 他们 它们 这个 一个 因为
        所以 但是 已经 需要 关于 通过 进行 软件 数据 设置 系统 网络 服务 配置 命令 程序
        文件 软 件 据 设 统 网 络 务 码 认 户 间 问 题 这样 为了 对于 时候 还是""",
    "zh-TW": """的 是 在 了 不 和 有 中 這 個 們 為 來 上 以 到 說 時 要 就 會 可 也 對 於
        著 下 之 過 發 後 裡 用 種 經 麼 學 現 當 沒 動 還 進 樣 實 開 從 與 將 該 並 被 或
        把 讓 使 如 果 所 其 這些 那些 可以 如果 使用 沒有 我們 他們 它們 這個 一個 因為
        所以 但是 已經 需要 關於 通過 進行 軟體 資料 設定 系統 網路 服務 配置 指令 程式
        檔案 軟 體 資 設 統 網 路 務 碼 認 戶 間 問 題 這樣 為了 對於 時候 還是""",
    "ja": """の に は を た が で て と し れ さ ある いる も する から な こと として い や
        れる など なっ ない この ため その あっ よう また もの という あり まで られ なる
        へ か だ これ により おり より による ず なり られる において ば なく しかし
        について せ だっ できる それ う ので なお のみ でき き つ および いう さらに でも
        ら たり ます ん なら です ません ください 場合 以下 次 ファイル コマンド システム
        パッケージ 設定 使用 ユーザー""",
    "th": """ที่ และ ใน การ ของ เป็น มี ได้ ไม่ ให้ จะ ว่า กับ นี้ จาก ไป มา แต่ ก็ อยู่
        คน หรือ โดย ความ ซึ่ง เมื่อ ทำ แล้ว อย่าง""",
}


def frequent_words(lang: str) -> tuple[str, ...]:
    """The frequent-word list of ``lang`` (an exact key of this module's tables), or ``()``."""
    text = SPACED.get(lang)
    if text is not None:
        return tuple(dict.fromkeys(w.lower() for w in text.split()))
    text = UNSPACED.get(lang)
    if text is not None:
        return tuple(dict.fromkeys(text.split()))
    return ()
