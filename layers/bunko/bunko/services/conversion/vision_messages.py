"""The recommend-mode reasons and warnings in the user's language (zh, en, ja)."""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    "image": {
        "en": "Images have no text layer; a vision model reads them in precise mode.",
        "ja": "画像にはテキスト層がないため、高精度モード（ビジョンモデル）を推奨します。",
        "zh": "图片没有文本层，建议使用高精度模式（视觉模型）读取。",
    },
    "text_file": {
        "en": "The file carries its text; fast extraction reads all of it.",
        "ja": "ファイルにテキストが含まれているため、高速モードで十分に抽出できます。",
        "zh": "文件本身包含文本，快速模式即可完整提取。",
    },
    "pdf_scanned": {
        "en": "The pages carry little text (about {chars} characters per page): "
        "likely scanned, so precise mode is recommended.",
        "ja": "ページのテキストが少ない（1 ページあたり約 {chars} 文字）ため、"
        "スキャン文書と判断し高精度モードを推奨します。",
        "zh": "页面文本很少（每页约 {chars} 个字符），可能是扫描件，建议使用高精度模式。",
    },
    "pdf_text": {
        "en": "The pages carry text (about {chars} characters per page); fast mode reads it.",
        "ja": "ページにテキストがあります（1 ページあたり約 {chars} 文字）。高速モードで抽出できます。",
        "zh": "页面包含文本（每页约 {chars} 个字符），快速模式即可提取。",
    },
    "pdf_no_text": {
        "en": "No text could be extracted from this PDF: it is scanned, precise mode reads it.",
        "ja": "この PDF からテキストを抽出できませんでした。スキャン文書のため高精度モードを推奨します。",
        "zh": "无法从该 PDF 提取文本，可能是扫描件，建议使用高精度模式。",
    },
    "pdf_large": {
        "en": "The file is large for its kind; large PDFs are often scans, "
        "so precise mode is recommended.",
        "ja": "ファイルサイズが大きいため、高精度モードを推奨します。",
        "zh": "文件较大，大型 PDF 通常为扫描件，建议使用高精度模式。",
    },
    "pdf_unknown": {
        "en": "A PDF of ordinary size usually carries text; fast mode is recommended.",
        "ja": "通常サイズの PDF は多くの場合テキストを含むため、高速モードを推奨します。",
        "zh": "普通大小的 PDF 通常包含文本，建议使用快速模式。",
    },
    "unsupported": {
        "en": "This file type is not supported; it cannot be indexed in either mode.",
        "ja": "このファイル形式はサポートされていないため、どちらのモードでも処理できません。",
        "zh": "不支持该文件类型，两种模式都无法处理。",
    },
    "warn_slow": {
        "en": "Processing may take a long time.",
        "ja": "処理時間が長くなる可能性があります",
        "zh": "处理时间可能较长",
    },
    "warn_cost": {
        "en": "Model API fees apply.",
        "ja": "API 利用料が発生します",
        "zh": "会产生 API 使用费用",
    },
    "warn_no_vision_model": {
        "en": "No vision-capable model is configured: add a model config with supportsVision.",
        "ja": "ビジョン対応モデルが設定されていません（supportsVision のモデル設定を追加してください）",
        "zh": "尚未配置支持视觉的模型（请添加 supportsVision 的模型配置）",
    },
    "warn_too_large": {
        "en": "The file exceeds the upload limit of {limit} MB.",
        "ja": "ファイルがアップロード上限（{limit} MB）を超えています",
        "zh": "文件超过上传上限（{limit} MB）",
    },
    "warn_not_uploaded": {
        "en": "Upload the file first for a check of how much text its pages carry.",
        "ja": "アップロード後に再確認すると、ページごとのテキスト量から判定できます",
        "zh": "上传后再次检查，可根据每页文本量判断",
    },
}


def message(key: str, language: str, **values: object) -> str:
    table = MESSAGES[key]
    return table.get(language, table["en"]).format(**values)
