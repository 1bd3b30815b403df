// Words on screen in ja / en / zh (the rule: languageFromSettings below); English fills any gap.
import * as api from './api.js';
import * as session from './session.js';

export const LANGUAGES = [['ja', '日本語'], ['en', 'English'], ['zh', '中文']];
const KEY = 'bunko.lang';

const en = {
  'nav.main': 'Main', 'nav.library': 'Library', 'nav.search': 'Search', 'nav.chat': 'Chat', 'nav.settings': 'Settings', 'nav.admin': 'Users',
  'lang.label': 'Language',
  'auth.title': 'Welcome to Bunko', 'auth.intro': 'Your documents, searchable and ready to answer questions.',
  'auth.username': 'Username', 'auth.password': 'Password', 'auth.passwordHint': 'At least 8 characters.',
  'auth.signIn': 'Sign in', 'auth.create': 'Create account', 'auth.signOut': 'Sign out',
  'auth.withProvider': 'Sign in with {name}', 'auth.orPassword': 'or with a username and password', 'auth.signingIn': 'Signing in…',
  'auth.oidcFailed': "Signing in with your organization's account did not work: {reason}",
  'auth.oidcNotStarted': 'A sign-in that this page did not start was ignored. Sign in again here.',
  'status.idle': 'Index up to date', 'status.indexing': 'Indexing ({n} waiting)', 'status.docs': '{n} documents', 'status.doc': '{n} document', 'status.model': 'Model', 'status.refining': 'refining with {name} {done}/{total}',
  'lib.title': 'Library', 'lib.queue': 'Files to upload', 'lib.drop': 'Drop files here or choose files', 'lib.dropHint': 'PDF, Word, PowerPoint, Excel, HTML, Markdown, text, CSV, JSON',
  'lib.fast': 'fast', 'lib.precise': 'precise', 'lib.recommended': 'Recommended', 'lib.upload': 'Upload', 'lib.remove': 'Remove', 'lib.uploaded': 'Uploaded',
  'lib.chunkSize': 'Chunk size', 'lib.chunkOverlap': 'Chunk overlap', 'lib.mode': 'Mode', 'lib.category': 'Category',
  'lib.files': 'Files', 'lib.clear': 'Delete all', 'lib.clearConfirm': 'Delete every file in this library?', 'lib.empty': 'No files yet. Upload some above.',
  'lib.delete': 'Delete', 'lib.name': 'Name', 'lib.status': 'Status', 'lib.chunks': 'chunks', 'lib.chunksHead': 'Chunks', 'lib.size': 'Size', 'lib.actions': 'Actions',
  'lib.uploadedDirect': 'Uploaded — being indexed; it appears in the list below in a moment',
  'lib.direct.blocked': "Storage did not accept the upload from {detail}: the bucket's CORS rules may not allow this page (an administrator adds its address with bunko:corsOrigins), or the network failed.",
  'lib.direct.signature': "Storage refused the upload's signature ({detail}): something changed the request on the way. Upload the file again.",
  'lib.direct.expired': 'The upload link expired before the file was sent ({detail}). Upload the file again.',
  'lib.direct.tooLarge': 'Storage refused the file as too large ({detail}).',
  'lib.direct.denied': 'Storage refused the upload ({detail}): the server may not be allowed to write to its bucket. Tell an administrator.',
  'lib.direct.storage': 'Storage refused the upload ({detail}).', 'lib.direct.aborted': 'Upload cancelled.',
  'lib.waiting': 'Waiting its turn', 'lib.sending': 'Uploading…', 'lib.progress': 'Uploading: {done} of {total} done',
  'lib.paced': 'the server asked to slow down, continuing in {s} s', 'lib.summaryDone': '{n} uploaded', 'lib.summaryFailed': '{n} failed', 'lib.retry': 'Retry',
  'lib.advanced': 'Advanced options', 'lib.advancedHint': 'How files are cut into passages, and each file’s reading mode (fast reads the text; precise also reads page images). The defaults suit nearly every file.',
  'lib.existing': 'Already in the library (the same file): nothing added', 'lib.summaryExisting': '{n} already in the library',
  'lib.notImage': '{ext} images are not supported yet: upload PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), HTML, Markdown, text, CSV or JSON.',
  'lib.notType': '{ext} files are not supported yet: upload PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), HTML, Markdown, text, CSV or JSON.',
  'lib.notFile': 'Files of this type are not supported yet: upload PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), HTML, Markdown, text, CSV or JSON.',
  'lib.searchFiles': 'Filter files by name', 'lib.searchPlaceholder': 'Filter by name', 'lib.sortBy': 'Sort by',
  'lib.sort.newest': 'Newest first', 'lib.sort.oldest': 'Oldest first', 'lib.sort.name': 'Name A–Z', 'lib.sort.nameDesc': 'Name Z–A',
  'lib.sort.largest': 'Largest first', 'lib.sort.smallest': 'Smallest first', 'lib.sort.type': 'Type',
  'lib.pages': 'Pages', 'lib.previous': 'Previous', 'lib.next': 'Next', 'lib.range': '{from}–{to} of {total}', 'lib.noMatch': 'No file name contains “{q}”.',
  'lib.type': 'Type', 'lib.added': 'Added', 'lib.download': 'Download', 'lib.deleteConfirm': 'Delete “{name}”? Its chunks and its original file are deleted too.',
  'st.pending': 'pending', 'st.indexing': 'indexing', 'st.completed': 'completed', 'st.failed': 'failed',
  'file.title': 'File', 'file.chunks': 'Chunks',
  'file.earlier': 'Show earlier chunks', 'file.more': 'Show more chunks', 'file.shown': 'Showing {shown} of {total} chunks', 'file.none': 'No chunks yet.',
  'search.title': 'Search', 'search.label': 'Search', 'search.placeholder': 'Words or a question', 'search.category': 'Category',
  'search.all': 'All categories', 'search.button': 'Search', 'search.none': 'Nothing found.', 'search.engines': 'found by',
  'chat.title': 'Chat', 'chat.message': 'Message', 'chat.placeholder': 'Ask about your documents (Enter sends, Shift+Enter for a new line)',
  'chat.send': 'Send', 'chat.stop': 'Stop', 'chat.sources': 'Sources', 'chat.source': 'Source', 'chat.noSources': 'No sources.',
  'chat.openFile': 'Open in file', 'chat.page': 'p.{n}', 'chat.slide': 'slide {n}', 'chat.sheet': 'sheet {n}',
  'chat.openOriginal': 'Open the original', 'chat.openOriginalAt': 'Open the original at {page}', 'chat.stopped': 'Stopped.', 'chat.clear': 'New conversation', 'chat.empty': 'Ask a question about your documents.',
  'conv.list': 'Conversations', 'conv.untitled': 'New conversation', 'conv.none': 'No conversations yet.', 'conv.more': 'Show more',
  'conv.rename': 'Rename', 'conv.renameOf': 'Rename “{title}”', 'conv.deleteOf': 'Delete “{title}”', 'conv.titleLabel': 'Conversation title',
  'conv.deleteConfirm': 'Delete the conversation “{title}” and all its messages?', 'conv.deleted': 'Conversation deleted',
  'conv.missing': 'That conversation is no longer there (deleted, or past the server’s retention). Ask a question to start a new one.',
  'common.close': 'Close', 'common.save': 'Save', 'common.saved': 'Saved', 'common.delete': 'Delete', 'common.edit': 'Edit', 'common.cancel': 'Cancel',
  'set.title': 'Settings', 'set.retrieval': 'Search and chat', 'set.topK': 'Top K', 'set.similarityThreshold': 'Similarity threshold',
  'set.enableRerank': 'Rerank', 'set.enableFullTextSearch': 'Full-text search', 'set.temperature': 'Temperature', 'set.maxTokens': 'Max tokens', 'set.language': 'Language',
  'mc.title': 'Model configs', 'mc.none': 'No model configs.', 'mc.hasKey': 'key set', 'mc.name': 'Name', 'mc.provider': 'Provider', 'mc.modelId': 'Model id',
  'mc.type': 'Type', 'mc.baseUrl': 'Base URL', 'mc.apiKey': 'API key (write-only)', 'mc.add': 'Add model', 'mc.keepKey': 'empty: keep the stored key',
  'key.title': 'API keys for agents', 'key.none': 'No API keys.', 'key.revoke': 'Revoke', 'key.name': 'Key name', 'key.scopes': 'Scopes',
  'key.create': 'Create key', 'key.once': 'Copy this key now: it is shown only once.', 'key.secret': 'New API key', 'key.copy': 'Copy', 'key.copied': 'Copied', 'key.config': 'settings',
  'admin.title': 'Users', 'admin.add': 'Add a user', 'admin.create': 'Create user', 'admin.confirm': 'Delete {name} and all their files?',
  'admin.usage': '{documents} documents · {size}', 'admin.makeAdmin': 'Make admin', 'admin.removeAdmin': 'Remove admin',
  'admin.resetPassword': 'Reset password',
  'admin.passwordReset': 'Password of {name} reset.',
  'admin.resetOf': 'Reset the password of {name}', 'admin.resetHint': 'At least 8 characters. Their sessions end; tell them the new password.',
  'auth.signupClosed': 'New accounts are made by an admin: ask one to add you.',
  'set.password': 'My password', 'set.passwordNote': 'Changing it signs you out everywhere else.', 'set.currentPassword': 'Current password',
  'set.newPassword': 'New password', 'set.repeatPassword': 'New password again', 'set.changePassword': 'Change password',
  'set.passwordChanged': 'Password changed',
  'set.mine': 'Yours: they apply to you in every library.', 'set.library': 'The library’s: {name}.', 'set.libraryOwn': 'Your library’s.',
  'set.readOnly': 'Only editors and owners of {name} change these.', 'set.inUse': 'In use',
  'key.readOnly': 'A read-only key (kb:read) for {name}: you are a viewer there. Its editors and owners list and revoke keys.',
  'lib.fedByDrop': 'The server’s drop folder fills this library: files put in it appear here.',
  'lib.fedByUploads': 'Files here come from uploads (this page, the API, agents). The server’s drop folder fills another library.',
  'admin.drop': 'Drop folder', 'admin.dropHint': 'Files put in the server’s drop folder (drop/ in its data folder) are added to this library; the CLI searches it when no --library is given. Files dropped earlier stay where they are.',
  'admin.dropTarget': 'Fills the library', 'admin.dropSaved': 'The drop folder now fills {name}.',
  'admin.only': 'Only admins manage users. Ask one to add a colleague or reset a password.', 'set.passwordMismatch': 'The two new passwords differ.',
  'lib.readOnly': 'You can search and chat over {name} (viewer); its owners can make you an editor to add files.', 'lib.current': 'Library', 'lib.own': 'My library', 'lib.role.viewer': 'viewer', 'lib.role.editor': 'editor', 'lib.role.owner': 'owner',
  'libs.title': 'Libraries', 'libs.none': 'No shared libraries yet.', 'libs.name': 'New library name', 'libs.create': 'Create library',
  'libs.members': 'Members', 'libs.add': 'Add member', 'libs.username': 'Username', 'libs.role': 'Role', 'libs.remove': 'Remove',
  'libs.delete': 'Delete library', 'libs.confirm': 'Delete the library {name} and all its files?', 'libs.leave': 'Leave',
  'notFound': 'Page not found',
  'models.title': 'Models in use', 'models.selectedLLMId': 'Chat model', 'models.selectedRerankId': 'Rerank model', 'models.selectedEmbeddingId': 'Embedding model',
  'models.offline': 'Offline answers (quotes the sources)', 'models.noRerank': 'No reranking', 'models.serverDefault': 'Server default', 'models.use': 'Use these models',
  'models.keywordOnly': 'keyword search only', 'models.serving': 'Search uses {name}', 'models.building': 'building {name}: {done} of {total} chunks (search keeps using the current model until it is done)',
  'models.failed': '{name} failed: {error}',
  'models.refining': '{name} is refining search in the background: {done} of {total} chunks', 'models.refined': 'refined in the background: all {total} chunks (new files are searchable with {name} until refined)',
  'meta.title': 'Metadata', 'meta.of': 'Metadata of {name}', 'meta.edit': 'Edit metadata', 'meta.editOf': 'Edit metadata of {name}',
  'meta.dialogTitle': 'Metadata of “{name}”', 'meta.key': 'Key', 'meta.value': 'Value', 'meta.list': 'List',
  'meta.keyN': 'Key {n}', 'meta.valueN': 'Value {n}', 'meta.listN': 'List: row {n} holds comma-separated values', 'meta.removeN': 'Remove row {n}',
  'meta.addRow': 'Add a row', 'meta.keyPlaceholder': 'e.g. team', 'meta.valuePlaceholder': 'e.g. legal, 2024, 2024-05-01',
  'meta.hint': 'A number is saved as a number and a date as written (2024-05-01); tick List for several comma-separated values. Saving replaces all of this file’s metadata.',
  'meta.forUpload': 'Metadata for these files (optional)', 'meta.uploadHint': 'Given to every file of this upload, to filter by later. A number is saved as a number; tick List for comma-separated values.',
  'meta.needKey': 'Row {n} has a value but no key.', 'meta.twice': 'The key “{key}” is given twice.', 'meta.fromFile': 'Its front matter gives: {keys} (the form’s rows win for the same key).', 'meta.uploadOnce': 'The rows empty after each upload. A Markdown file’s front matter adds the keys these rows do not set.', 'meta.saved': 'Metadata saved',
  'filter.label': 'Metadata filter', 'filter.title': 'Filter', 'filter.active': 'Active filter conditions', 'filter.add': 'Add condition', 'filter.apply': 'Add',
  'filter.clear': 'Clear filter', 'filter.clearShort': 'Clear', 'filter.match': 'Match', 'filter.all': 'all conditions', 'filter.any': 'any condition',
  'filter.key': 'Key', 'filter.op': 'Condition', 'filter.value': 'Value', 'filter.values': 'Values (comma-separated)', 'filter.fromLabel': 'From', 'filter.toLabel': 'To',
  'filter.op.equals': 'equals', 'filter.op.in': 'one of', 'filter.op.range': 'between', 'filter.op.exists': 'has (any value)',
  'filter.is': '{key} = {value}', 'filter.oneOf': '{key}: one of {values}', 'filter.between': '{key} {from} – {to}', 'filter.from': '{key} ≥ {from}', 'filter.upTo': '{key} ≤ {to}', 'filter.has': 'has {key}',
  'filter.and': ' and ', 'filter.or': ' or ', 'filter.remove': 'Remove condition: {what}', 'filter.used': 'Filter: {what}',
  'filter.hasNote': 'Files that have this key, whatever its value.', 'filter.noKeys': 'No metadata yet: add some to files in the library to filter by it.',
  'filter.needValue': 'Give a value.', 'filter.needBound': 'Give a lower bound, an upper bound, or both.', 'filter.noFiles': 'No file matches the filter.',
};
const ja = {
  'nav.main': 'メイン', 'nav.library': 'ライブラリ', 'nav.search': '検索', 'nav.chat': 'チャット', 'nav.settings': '設定', 'nav.admin': 'ユーザー',
  'lang.label': '言語',
  'auth.title': 'Bunko へようこそ', 'auth.intro': 'あなたの資料を検索し、質問に答えます。',
  'auth.username': 'ユーザー名', 'auth.password': 'パスワード', 'auth.passwordHint': '8 文字以上。',
  'auth.signIn': 'サインイン', 'auth.create': 'アカウント作成', 'auth.signOut': 'サインアウト',
  'auth.withProvider': '{name} でサインイン', 'auth.orPassword': 'またはユーザー名とパスワードで', 'auth.signingIn': 'サインインしています…',
  'auth.oidcFailed': '組織のアカウントでサインインできませんでした：{reason}',
  'auth.oidcNotStarted': 'このページで始めていないサインインは無視しました。ここからもう一度サインインしてください。',
  'status.idle': 'インデックスは最新です', 'status.indexing': 'インデックス作成中（待ち {n} 件）', 'status.docs': '文書 {n} 件', 'status.doc': '文書 {n} 件', 'status.model': 'モデル', 'status.refining': '{name} で改善中 {done}/{total}',
  'lib.title': 'ライブラリ', 'lib.queue': 'アップロードするファイル', 'lib.drop': 'ここにファイルをドロップ、またはファイルを選択', 'lib.dropHint': 'PDF、Word、PowerPoint、Excel、HTML、Markdown、テキスト、CSV、JSON',
  'lib.fast': '高速', 'lib.precise': '高精度', 'lib.recommended': '推奨', 'lib.upload': 'アップロード', 'lib.remove': '取り除く', 'lib.uploaded': 'アップロード済み',
  'lib.chunkSize': 'チャンクサイズ', 'lib.chunkOverlap': 'オーバーラップ', 'lib.mode': 'モード', 'lib.category': 'カテゴリ',
  'lib.files': 'ファイル', 'lib.clear': 'すべて削除', 'lib.clearConfirm': 'このライブラリのファイルをすべて削除しますか？', 'lib.empty': 'ファイルはまだありません。',
  'lib.delete': '削除', 'lib.name': '名前', 'lib.status': '状態', 'lib.chunks': 'チャンク', 'lib.chunksHead': 'チャンク', 'lib.size': 'サイズ', 'lib.actions': '操作',
  'lib.uploadedDirect': 'アップロードしました。索引を作成中です。まもなく下の一覧に表示されます',
  'lib.direct.blocked': 'ストレージが {detail} からのアップロードを受け付けませんでした。バケットの CORS 設定がこのページを許可していない（管理者が bunko:corsOrigins にアドレスを追加します）か、ネットワークの障害です。',
  'lib.direct.signature': 'ストレージがアップロードの署名を拒否しました（{detail}）。途中でリクエストが変更されました。もう一度アップロードしてください。',
  'lib.direct.expired': 'ファイルを送る前にアップロード用リンクの期限が切れました（{detail}）。もう一度アップロードしてください。',
  'lib.direct.tooLarge': 'ファイルが大きすぎるため、ストレージが拒否しました（{detail}）。',
  'lib.direct.denied': 'ストレージがアップロードを拒否しました（{detail}）。サーバーにバケットへの書き込み権限がない可能性があります。管理者に連絡してください。',
  'lib.direct.storage': 'ストレージがアップロードを拒否しました（{detail}）。', 'lib.direct.aborted': 'アップロードを中止しました。',
  'lib.waiting': '順番待ち', 'lib.sending': 'アップロード中…', 'lib.progress': 'アップロード中: {total} 件中 {done} 件完了',
  'lib.paced': 'サーバーの要請で一時待機中、{s} 秒後に再開します', 'lib.summaryDone': '{n} 件アップロードしました', 'lib.summaryFailed': '{n} 件失敗', 'lib.advanced': '詳細設定', 'lib.advancedHint': 'ファイルを区切る長さと、ファイルごとの読み取りモード（高速はテキストを読み、精密はページ画像も読みます）。ほとんどのファイルは既定のままで十分です。',
  'lib.existing': 'すでにライブラリにあります（同じファイル）：追加はありません', 'lib.summaryExisting': '{n} 件はすでにライブラリにあります',
  'lib.notImage': '{ext} 画像にはまだ対応していません：PDF、Word（.docx）、PowerPoint（.pptx）、Excel（.xlsx）、HTML、Markdown、テキスト、CSV、JSON をアップロードしてください。',
  'lib.notType': '{ext} ファイルにはまだ対応していません：PDF、Word（.docx）、PowerPoint（.pptx）、Excel（.xlsx）、HTML、Markdown、テキスト、CSV、JSON をアップロードしてください。',
  'lib.notFile': 'この種類のファイルにはまだ対応していません：PDF、Word（.docx）、PowerPoint（.pptx）、Excel（.xlsx）、HTML、Markdown、テキスト、CSV、JSON をアップロードしてください。',
  'lib.retry': '再試行',
  'lib.searchFiles': 'ファイル名で絞り込み', 'lib.searchPlaceholder': 'ファイル名で絞り込み', 'lib.sortBy': '並べ替え',
  'lib.sort.newest': '新しい順', 'lib.sort.oldest': '古い順', 'lib.sort.name': '名前 (昇順)', 'lib.sort.nameDesc': '名前 (降順)',
  'lib.sort.largest': 'サイズの大きい順', 'lib.sort.smallest': 'サイズの小さい順', 'lib.sort.type': '種類',
  'lib.pages': 'ページ', 'lib.previous': '前へ', 'lib.next': '次へ', 'lib.range': '{total} 件中 {from}–{to} 件', 'lib.noMatch': '「{q}」を含むファイル名はありません。',
  'lib.type': '種類', 'lib.added': '追加日時', 'lib.download': 'ダウンロード', 'lib.deleteConfirm': '「{name}」を削除しますか？チャンクと元のファイルも削除されます。',
  'st.pending': '待機中', 'st.indexing': '処理中', 'st.completed': '完了', 'st.failed': '失敗',
  'file.title': 'ファイル', 'file.chunks': 'チャンク',
  'file.earlier': '前のチャンクを表示', 'file.more': 'さらにチャンクを表示', 'file.shown': '全 {total} 件中 {shown} 件のチャンクを表示', 'file.none': 'チャンクはまだありません。',
  'search.title': '検索', 'search.label': '検索', 'search.placeholder': '言葉または質問', 'search.category': 'カテゴリ',
  'search.all': 'すべてのカテゴリ', 'search.button': '検索', 'search.none': '見つかりませんでした。', 'search.engines': '検出:',
  'chat.title': 'チャット', 'chat.message': 'メッセージ', 'chat.placeholder': '資料について質問（Enter で送信、Shift+Enter で改行）',
  'chat.send': '送信', 'chat.stop': '停止', 'chat.sources': '出典', 'chat.source': '出典', 'chat.noSources': '出典なし。',
  'chat.openFile': 'ファイルで開く', 'chat.page': 'p.{n}', 'chat.slide': 'スライド{n}', 'chat.sheet': 'シート{n}',
  'chat.openOriginal': '原本を開く', 'chat.openOriginalAt': '原本を {page} で開く', 'chat.stopped': '停止しました。', 'chat.clear': '新しい会話', 'chat.empty': '資料について質問してください。',
  'conv.list': '会話', 'conv.untitled': '新しい会話', 'conv.none': '会話はまだありません。', 'conv.more': 'さらに表示',
  'conv.rename': '名前を変更', 'conv.renameOf': '「{title}」の名前を変更', 'conv.deleteOf': '「{title}」を削除', 'conv.titleLabel': '会話の名前',
  'conv.deleteConfirm': '会話「{title}」とそのメッセージをすべて削除しますか？', 'conv.deleted': '会話を削除しました',
  'conv.missing': 'その会話はもうありません（削除されたか、サーバーの保存期間を過ぎました）。質問すると新しい会話が始まります。',
  'common.close': '閉じる', 'common.save': '保存', 'common.saved': '保存しました', 'common.delete': '削除', 'common.edit': '編集', 'common.cancel': 'キャンセル',
  'set.title': '設定', 'set.retrieval': '検索とチャット', 'set.topK': 'Top K', 'set.similarityThreshold': '類似度のしきい値',
  'set.enableRerank': 'リランク', 'set.enableFullTextSearch': '全文検索', 'set.temperature': '温度', 'set.maxTokens': '最大トークン数', 'set.language': '言語',
  'mc.title': 'モデル設定', 'mc.none': 'モデル設定はありません。', 'mc.hasKey': 'キー設定済み', 'mc.name': '名前', 'mc.provider': 'プロバイダー', 'mc.modelId': 'モデル ID',
  'mc.type': '種類', 'mc.baseUrl': 'ベース URL', 'mc.apiKey': 'API キー（書き込みのみ）', 'mc.add': 'モデルを追加', 'mc.keepKey': '空欄: 保存済みのキーを使う',
  'key.title': 'エージェント用 API キー', 'key.none': 'API キーはありません。', 'key.revoke': '無効化', 'key.name': 'キーの名前', 'key.scopes': 'スコープ',
  'key.create': 'キーを作成', 'key.once': 'このキーは一度しか表示されません。今コピーしてください。', 'key.secret': '新しい API キー', 'key.copy': 'コピー', 'key.copied': 'コピーしました', 'key.config': '設定',
  'admin.title': 'ユーザー', 'admin.add': 'ユーザーを追加', 'admin.create': 'ユーザーを作成', 'admin.confirm': '{name} とそのファイルをすべて削除しますか？',
  'admin.usage': '{documents} 件 · {size}', 'admin.makeAdmin': '管理者にする', 'admin.removeAdmin': '管理者から外す',
  'admin.resetPassword': 'パスワードを再設定',
  'admin.passwordReset': '{name} のパスワードを再設定しました。',
  'admin.resetOf': '{name} のパスワードを再設定', 'admin.resetHint': '8 文字以上。ログイン中のセッションは終了します。新しいパスワードを本人に伝えてください。',
  'auth.signupClosed': '新しいアカウントは管理者が作成します。管理者に追加を依頼してください。',
  'set.password': '自分のパスワード', 'set.passwordNote': '変更すると、ほかの場所ではサインアウトされます。', 'set.currentPassword': '現在のパスワード',
  'set.newPassword': '新しいパスワード', 'set.repeatPassword': '新しいパスワード（確認）', 'set.changePassword': 'パスワードを変更',
  'set.passwordChanged': 'パスワードを変更しました',
  'set.mine': 'あなたの設定です。どのライブラリでもあなたに適用されます。', 'set.library': 'ライブラリの設定です：{name}。', 'set.libraryOwn': 'あなたのライブラリの設定です。',
  'set.readOnly': '{name} の編集者とオーナーだけが変更できます。', 'set.inUse': '使用中',
  'key.readOnly': '{name} の読み取り専用キー（kb:read）です。あなたはそこの閲覧者です。キーの一覧と無効化は編集者とオーナーが行います。',
  'lib.fedByDrop': 'サーバーのドロップフォルダーがこのライブラリに入ります。フォルダーに置いたファイルはここに表示されます。',
  'lib.fedByUploads': 'ここのファイルはアップロード（このページ、API、エージェント）から来ます。サーバーのドロップフォルダーは別のライブラリに入ります。',
  'admin.drop': 'ドロップフォルダー', 'admin.dropHint': 'サーバーのドロップフォルダー（データフォルダー内の drop/）に置いたファイルは、このライブラリに追加されます。--library を付けない CLI の検索もここを探します。以前に置いたファイルは元の場所に残ります。',
  'admin.dropTarget': '追加先のライブラリ', 'admin.dropSaved': 'ドロップフォルダーの追加先を {name} にしました。',
  'err.badCredentials': 'ユーザー名またはパスワードが違います。', 'err.permission': 'この操作には {scope} の権限が必要です。',
  'err.signupClosed': '新規登録は締め切られています。管理者に追加を依頼してください。', 'err.taken': 'ユーザー名「{name}」は使われています。',
  'err.length': '{field}：{min}〜{max} 文字にしてください。', 'err.currentPassword': '現在のパスワードが違います。',
  'err.samePassword': '新しいパスワードは現在のものと別にしてください。', 'err.lastAdmin': '最後の管理者は外せません。先に別の管理者を作ってください。',
  'err.locked': '失敗が続いたため、しばらくサインインできません。時間をおいてもう一度お試しください。', 'err.signedOut': 'セッションが終了しました。もう一度サインインしてください。',
  'admin.only': 'ユーザーを管理できるのは管理者だけです。同僚の追加やパスワードの再設定は管理者に依頼してください。', 'set.passwordMismatch': '新しいパスワードが一致しません。',
  'lib.readOnly': '{name} は検索とチャットができます（閲覧者）。ファイルを追加するにはオーナーに編集者にしてもらってください。', 'lib.current': 'ライブラリ', 'lib.own': '自分のライブラリ', 'lib.role.viewer': '閲覧者', 'lib.role.editor': '編集者', 'lib.role.owner': 'オーナー',
  'libs.title': 'ライブラリ', 'libs.none': '共有ライブラリはまだありません。', 'libs.name': '新しいライブラリの名前', 'libs.create': 'ライブラリを作成',
  'libs.members': 'メンバー', 'libs.add': 'メンバーを追加', 'libs.username': 'ユーザー名', 'libs.role': '役割', 'libs.remove': '外す',
  'libs.delete': 'ライブラリを削除', 'libs.confirm': 'ライブラリ {name} とそのファイルをすべて削除しますか？', 'libs.leave': '抜ける',
  'notFound': 'ページが見つかりません',
  'models.title': '使用するモデル', 'models.selectedLLMId': 'チャットモデル', 'models.selectedRerankId': 'リランクモデル', 'models.selectedEmbeddingId': '埋め込みモデル',
  'models.offline': 'オフライン回答（出典を引用）', 'models.noRerank': 'リランクなし', 'models.serverDefault': 'サーバーの既定', 'models.use': 'このモデルを使う',
  'models.keywordOnly': 'キーワード検索のみ', 'models.serving': '検索に使用中: {name}', 'models.building': '{name} を構築中: {total} チャンク中 {done}（完了まで現在のモデルで検索します）',
  'models.failed': '{name} が失敗しました: {error}',
  'models.refining': '{name} がバックグラウンドで検索を改善中: {total} チャンク中 {done}', 'models.refined': 'バックグラウンドで {total} チャンクすべて改善済み（新しいファイルは改善されるまで {name} で検索できます）',
  'meta.title': 'メタデータ', 'meta.of': '{name} のメタデータ', 'meta.edit': 'メタデータを編集', 'meta.editOf': '{name} のメタデータを編集',
  'meta.dialogTitle': '「{name}」のメタデータ', 'meta.key': 'キー', 'meta.value': '値', 'meta.list': 'リスト',
  'meta.keyN': 'キー {n}', 'meta.valueN': '値 {n}', 'meta.listN': 'リスト: {n} 行目はカンマ区切りの値', 'meta.removeN': '{n} 行目を削除',
  'meta.addRow': '行を追加', 'meta.keyPlaceholder': '例: team', 'meta.valuePlaceholder': '例: legal、2024、2024-05-01',
  'meta.hint': '数値は数値として、日付は書いたとおり（2024-05-01）に保存されます。複数の値はカンマで区切り「リスト」にチェックを入れてください。保存するとこのファイルのメタデータはすべて置き換わります。',
  'meta.forUpload': 'これらのファイルのメタデータ（任意）', 'meta.uploadHint': '今回アップロードするすべてのファイルに付け、あとで絞り込みに使えます。数値は数値として保存されます。カンマ区切りの値は「リスト」にチェックを入れてください。',
  'meta.needKey': '{n} 行目に値がありますがキーがありません。', 'meta.twice': 'キー「{key}」が 2 回指定されています。', 'meta.fromFile': 'ファイルのフロントマターから：{keys}（フォームに同じキーがあればそちらが優先）', 'meta.uploadOnce': 'アップロードのたびに行は空に戻ります。Markdown ファイルのフロントマターは、ここで指定していないキーを追加します。', 'meta.saved': 'メタデータを保存しました',
  'filter.label': 'メタデータで絞り込み', 'filter.title': '絞り込み', 'filter.active': '適用中の条件', 'filter.add': '条件を追加', 'filter.apply': '追加',
  'filter.clear': '絞り込みを解除', 'filter.clearShort': '解除', 'filter.match': '一致', 'filter.all': 'すべての条件', 'filter.any': 'いずれかの条件',
  'filter.key': 'キー', 'filter.op': '条件', 'filter.value': '値', 'filter.values': '値（カンマ区切り）', 'filter.fromLabel': '下限', 'filter.toLabel': '上限',
  'filter.op.equals': '等しい', 'filter.op.in': 'いずれか', 'filter.op.range': '範囲', 'filter.op.exists': 'あり（値は問わない）',
  'filter.is': '{key} = {value}', 'filter.oneOf': '{key}: {values} のいずれか', 'filter.between': '{key} {from} – {to}', 'filter.from': '{key} ≥ {from}', 'filter.upTo': '{key} ≤ {to}', 'filter.has': '{key} あり',
  'filter.and': ' かつ ', 'filter.or': ' または ', 'filter.remove': '条件を外す: {what}', 'filter.used': '絞り込み: {what}',
  'filter.hasNote': '値にかかわらず、このキーを持つファイル。', 'filter.noKeys': 'メタデータはまだありません。ライブラリでファイルに付けると絞り込みに使えます。',
  'filter.needValue': '値を入力してください。', 'filter.needBound': '下限・上限のどちらか、または両方を入力してください。', 'filter.noFiles': '条件に合うファイルはありません。',
};
const zh = {
  'nav.main': '主菜单', 'nav.library': '资料库', 'nav.search': '搜索', 'nav.chat': '对话', 'nav.settings': '设置', 'nav.admin': '用户',
  'lang.label': '语言',
  'auth.title': '欢迎使用 Bunko', 'auth.intro': '检索您的文档，并回答问题。',
  'auth.username': '用户名', 'auth.password': '密码', 'auth.passwordHint': '至少 8 个字符。',
  'auth.signIn': '登录', 'auth.create': '创建账户', 'auth.signOut': '退出登录',
  'auth.withProvider': '使用 {name} 登录', 'auth.orPassword': '或使用用户名和密码', 'auth.signingIn': '正在登录…',
  'auth.oidcFailed': '无法使用组织账户登录：{reason}',
  'auth.oidcNotStarted': '已忽略一次并非从本页面发起的登录。请在此重新登录。',
  'status.idle': '索引已是最新', 'status.indexing': '正在索引（等待 {n} 个）', 'status.docs': '{n} 个文档', 'status.doc': '{n} 个文档', 'status.model': '模型', 'status.refining': '正在用 {name} 改进 {done}/{total}',
  'lib.title': '资料库', 'lib.queue': '待上传的文件', 'lib.drop': '将文件拖到此处或选择文件', 'lib.dropHint': 'PDF、Word、PowerPoint、Excel、HTML、Markdown、文本、CSV、JSON',
  'lib.fast': '快速', 'lib.precise': '精确', 'lib.recommended': '推荐', 'lib.upload': '上传', 'lib.remove': '移除', 'lib.uploaded': '已上传',
  'lib.chunkSize': '分块大小', 'lib.chunkOverlap': '分块重叠', 'lib.mode': '模式', 'lib.category': '分类',
  'lib.files': '文件', 'lib.clear': '全部删除', 'lib.clearConfirm': '删除此资料库中的所有文件？', 'lib.empty': '还没有文件。',
  'lib.delete': '删除', 'lib.name': '名称', 'lib.status': '状态', 'lib.chunks': '分块', 'lib.chunksHead': '分块', 'lib.size': '大小', 'lib.actions': '操作',
  'lib.uploadedDirect': '已上传，正在建立索引；稍后会出现在下方列表中',
  'lib.direct.blocked': '存储未接受来自 {detail} 的上传：存储桶的 CORS 规则可能不允许此页面（管理员可通过 bunko:corsOrigins 添加其地址），或网络出错。',
  'lib.direct.signature': '存储拒绝了上传签名（{detail}）：请求在途中被修改。请重新上传该文件。',
  'lib.direct.expired': '上传链接在文件发送前已过期（{detail}）。请重新上传该文件。',
  'lib.direct.tooLarge': '文件过大，存储拒绝接收（{detail}）。',
  'lib.direct.denied': '存储拒绝了上传（{detail}）：服务器可能无权写入其存储桶。请联系管理员。',
  'lib.direct.storage': '存储拒绝了上传（{detail}）。', 'lib.direct.aborted': '上传已取消。',
  'lib.waiting': '排队中', 'lib.sending': '上传中…', 'lib.progress': '上传中：{total} 个中已完成 {done} 个',
  'lib.paced': '服务器要求放慢速度，{s} 秒后继续', 'lib.summaryDone': '已上传 {n} 个', 'lib.summaryFailed': '{n} 个失败', 'lib.advanced': '高级选项', 'lib.advancedHint': '文件切分为段落的长度，以及每个文件的读取模式（快速读取文本；精确还读取页面图像）。默认值适合几乎所有文件。',
  'lib.existing': '资料库中已有（同一文件）：未新增', 'lib.summaryExisting': '{n} 个已在资料库中',
  'lib.notImage': '暂不支持 {ext} 图片：请上传 PDF、Word（.docx）、PowerPoint（.pptx）、Excel（.xlsx）、HTML、Markdown、文本、CSV 或 JSON。',
  'lib.notType': '暂不支持 {ext} 文件：请上传 PDF、Word（.docx）、PowerPoint（.pptx）、Excel（.xlsx）、HTML、Markdown、文本、CSV 或 JSON。',
  'lib.notFile': '暂不支持此类文件：请上传 PDF、Word（.docx）、PowerPoint（.pptx）、Excel（.xlsx）、HTML、Markdown、文本、CSV 或 JSON。',
  'lib.retry': '重试',
  'lib.searchFiles': '按名称筛选文件', 'lib.searchPlaceholder': '按名称筛选', 'lib.sortBy': '排序方式',
  'lib.sort.newest': '最新优先', 'lib.sort.oldest': '最早优先', 'lib.sort.name': '名称 A–Z', 'lib.sort.nameDesc': '名称 Z–A',
  'lib.sort.largest': '从大到小', 'lib.sort.smallest': '从小到大', 'lib.sort.type': '类型',
  'lib.pages': '分页', 'lib.previous': '上一页', 'lib.next': '下一页', 'lib.range': '第 {from}–{to} 个，共 {total} 个', 'lib.noMatch': '没有名称包含“{q}”的文件。',
  'lib.type': '类型', 'lib.added': '添加时间', 'lib.download': '下载', 'lib.deleteConfirm': '删除“{name}”？其分块和原始文件也会被删除。',
  'st.pending': '等待中', 'st.indexing': '索引中', 'st.completed': '已完成', 'st.failed': '失败',
  'file.title': '文件', 'file.chunks': '分块',
  'file.earlier': '显示前面的分块', 'file.more': '显示更多分块', 'file.shown': '显示 {shown} 个分块（共 {total} 个）', 'file.none': '还没有分块。',
  'search.title': '搜索', 'search.label': '搜索', 'search.placeholder': '关键词或问题', 'search.category': '分类',
  'search.all': '所有分类', 'search.button': '搜索', 'search.none': '没有找到结果。', 'search.engines': '检索方式:',
  'chat.title': '对话', 'chat.message': '消息', 'chat.placeholder': '就您的文档提问（Enter 发送，Shift+Enter 换行）',
  'chat.send': '发送', 'chat.stop': '停止', 'chat.sources': '来源', 'chat.source': '来源', 'chat.noSources': '没有来源。',
  'chat.openFile': '在文件中打开', 'chat.page': '第{n}页', 'chat.slide': '幻灯片 {n}', 'chat.sheet': '工作表 {n}',
  'chat.openOriginal': '打开原文件', 'chat.openOriginalAt': '在{page}打开原文件', 'chat.stopped': '已停止。', 'chat.clear': '新对话', 'chat.empty': '就您的文档提一个问题。',
  'conv.list': '对话列表', 'conv.untitled': '新对话', 'conv.none': '还没有对话。', 'conv.more': '显示更多',
  'conv.rename': '重命名', 'conv.renameOf': '重命名“{title}”', 'conv.deleteOf': '删除“{title}”', 'conv.titleLabel': '对话名称',
  'conv.deleteConfirm': '删除对话“{title}”及其所有消息？', 'conv.deleted': '对话已删除',
  'conv.missing': '该对话已不存在（已删除，或超过了服务器的保存期限）。提问即可开始新的对话。',
  'common.close': '关闭', 'common.save': '保存', 'common.saved': '已保存', 'common.delete': '删除', 'common.edit': '编辑', 'common.cancel': '取消',
  'set.title': '设置', 'set.retrieval': '搜索与对话', 'set.topK': 'Top K', 'set.similarityThreshold': '相似度阈值',
  'set.enableRerank': '重排序', 'set.enableFullTextSearch': '全文搜索', 'set.temperature': '温度', 'set.maxTokens': '最大 token 数', 'set.language': '语言',
  'mc.title': '模型配置', 'mc.none': '没有模型配置。', 'mc.hasKey': '已设置密钥', 'mc.name': '名称', 'mc.provider': '提供商', 'mc.modelId': '模型 ID',
  'mc.type': '类型', 'mc.baseUrl': 'Base URL', 'mc.apiKey': 'API 密钥（只写）', 'mc.add': '添加模型', 'mc.keepKey': '留空：保留已保存的密钥',
  'key.title': '智能体 API 密钥', 'key.none': '没有 API 密钥。', 'key.revoke': '吊销', 'key.name': '密钥名称', 'key.scopes': '权限范围',
  'key.create': '创建密钥', 'key.once': '请立即复制此密钥：它只显示一次。', 'key.secret': '新的 API 密钥', 'key.copy': '复制', 'key.copied': '已复制', 'key.config': '配置',
  'admin.title': '用户', 'admin.add': '添加用户', 'admin.create': '创建用户', 'admin.confirm': '删除 {name} 及其所有文件？',
  'admin.usage': '{documents} 个文档 · {size}', 'admin.makeAdmin': '设为管理员', 'admin.removeAdmin': '取消管理员',
  'admin.resetPassword': '重置密码',
  'admin.passwordReset': '已重置 {name} 的密码。',
  'admin.resetOf': '重置 {name} 的密码', 'admin.resetHint': '至少 8 个字符。其会话将结束；请把新密码告诉对方。',
  'auth.signupClosed': '新账户由管理员创建：请联系管理员添加您。',
  'set.password': '我的密码', 'set.passwordNote': '修改后，其他地方的登录将全部退出。', 'set.currentPassword': '当前密码',
  'set.newPassword': '新密码', 'set.repeatPassword': '再次输入新密码', 'set.changePassword': '修改密码',
  'set.passwordChanged': '密码已修改',
  'set.mine': '您的设置：在每个资料库中都对您生效。', 'set.library': '资料库的设置：{name}。', 'set.libraryOwn': '您的资料库的设置。',
  'set.readOnly': '只有 {name} 的编辑者和所有者可以修改这些。', 'set.inUse': '正在使用',
  'key.readOnly': '{name} 的只读密钥（kb:read）：您在那里是查看者。密钥的列表和吊销由编辑者和所有者管理。',
  'lib.fedByDrop': '服务器的投放文件夹会填充此资料库：放入其中的文件会出现在这里。',
  'lib.fedByUploads': '这里的文件来自上传（本页面、API、智能体）。服务器的投放文件夹填充的是另一个资料库。',
  'admin.drop': '投放文件夹', 'admin.dropHint': '放入服务器投放文件夹（数据文件夹中的 drop/）的文件会加入此资料库；不带 --library 的 CLI 搜索也搜索它。之前投放的文件保留在原处。',
  'admin.dropTarget': '加入的资料库', 'admin.dropSaved': '投放文件夹现在加入 {name}。',
  'err.badCredentials': '用户名或密码错误。', 'err.permission': '此操作需要 {scope} 权限。',
  'err.signupClosed': '注册已关闭：请联系管理员添加您。', 'err.taken': '用户名“{name}”已被使用。',
  'err.length': '{field}：需要 {min} 到 {max} 个字符。', 'err.currentPassword': '当前密码不正确。',
  'err.samePassword': '新密码必须与当前密码不同。', 'err.lastAdmin': '不能移除最后一位管理员：请先设置另一位管理员。',
  'err.locked': '失败次数过多，暂时无法登录。请稍后再试。', 'err.signedOut': '会话已结束：请重新登录。',
  'admin.only': '只有管理员可以管理用户。请联系管理员添加同事或重置密码。', 'set.passwordMismatch': '两次输入的新密码不一致。',
  'lib.readOnly': '您可以在 {name} 中搜索和聊天（查看者）；请所有者将您设为编辑者以添加文件。', 'lib.current': '资料库', 'lib.own': '我的资料库', 'lib.role.viewer': '查看者', 'lib.role.editor': '编辑者', 'lib.role.owner': '所有者',
  'libs.title': '资料库', 'libs.none': '还没有共享资料库。', 'libs.name': '新资料库名称', 'libs.create': '创建资料库',
  'libs.members': '成员', 'libs.add': '添加成员', 'libs.username': '用户名', 'libs.role': '角色', 'libs.remove': '移除',
  'libs.delete': '删除资料库', 'libs.confirm': '删除资料库 {name} 及其所有文件？', 'libs.leave': '退出',
  'notFound': '页面不存在',
  'models.title': '使用的模型', 'models.selectedLLMId': '对话模型', 'models.selectedRerankId': '重排序模型', 'models.selectedEmbeddingId': '嵌入模型',
  'models.offline': '离线回答（引用来源）', 'models.noRerank': '不重排序', 'models.serverDefault': '服务器默认', 'models.use': '使用这些模型',
  'models.keywordOnly': '仅关键词搜索', 'models.serving': '搜索使用 {name}', 'models.building': '正在构建 {name}：{done} / {total} 个块（完成前继续使用当前模型）',
  'models.failed': '{name} 失败：{error}',
  'models.refining': '{name} 正在后台改进搜索：{done} / {total} 个块', 'models.refined': '已在后台改进全部 {total} 个块（新文件在改进前用 {name} 搜索）',
  'meta.title': '元数据', 'meta.of': '{name} 的元数据', 'meta.edit': '编辑元数据', 'meta.editOf': '编辑 {name} 的元数据',
  'meta.dialogTitle': '“{name}”的元数据', 'meta.key': '键', 'meta.value': '值', 'meta.list': '列表',
  'meta.keyN': '键 {n}', 'meta.valueN': '值 {n}', 'meta.listN': '列表：第 {n} 行为逗号分隔的值', 'meta.removeN': '删除第 {n} 行',
  'meta.addRow': '添加一行', 'meta.keyPlaceholder': '例如 team', 'meta.valuePlaceholder': '例如 legal、2024、2024-05-01',
  'meta.hint': '数字按数字保存，日期按所写保存（2024-05-01）；多个值用逗号分隔并勾选“列表”。保存会替换此文件的全部元数据。',
  'meta.forUpload': '这些文件的元数据（可选）', 'meta.uploadHint': '添加到本次上传的每个文件，之后可按其筛选。数字按数字保存；逗号分隔的多个值请勾选“列表”。',
  'meta.needKey': '第 {n} 行有值但没有键。', 'meta.twice': '键“{key}”出现了两次。', 'meta.fromFile': '文件的 front matter 提供：{keys}（表单中同名键优先）。', 'meta.uploadOnce': '每次上传后这些行会清空。Markdown 文件的 front matter 会添加这里未设置的键。', 'meta.saved': '元数据已保存',
  'filter.label': '按元数据筛选', 'filter.title': '筛选', 'filter.active': '当前筛选条件', 'filter.add': '添加条件', 'filter.apply': '添加',
  'filter.clear': '清除筛选', 'filter.clearShort': '清除', 'filter.match': '匹配', 'filter.all': '全部条件', 'filter.any': '任一条件',
  'filter.key': '键', 'filter.op': '条件', 'filter.value': '值', 'filter.values': '值（逗号分隔）', 'filter.fromLabel': '从', 'filter.toLabel': '到',
  'filter.op.equals': '等于', 'filter.op.in': '其中之一', 'filter.op.range': '介于', 'filter.op.exists': '存在（任意值）',
  'filter.is': '{key} = {value}', 'filter.oneOf': '{key}：{values} 之一', 'filter.between': '{key} {from} – {to}', 'filter.from': '{key} ≥ {from}', 'filter.upTo': '{key} ≤ {to}', 'filter.has': '有 {key}',
  'filter.and': ' 且 ', 'filter.or': ' 或 ', 'filter.remove': '移除条件：{what}', 'filter.used': '筛选：{what}',
  'filter.hasNote': '具有此键的文件，不论其值。', 'filter.noKeys': '还没有元数据：在资料库中为文件添加后即可按其筛选。',
  'filter.needValue': '请输入一个值。', 'filter.needBound': '请输入下限、上限或两者。', 'filter.noFiles': '没有符合筛选条件的文件。',
};
const DICTS = { en, ja, zh };
let language = 'en';
const listeners = new Set();

function fromBrowser() {
  for (const tag of navigator.languages || [navigator.language]) {
    const code = (tag || '').slice(0, 2).toLowerCase();
    if (code in DICTS) return code;
  }
  return 'en';
}

// One rule (issue 49): signed in, the person's saved choice, else the browser's language;
// signed out, the one last shown in this browser, else the browser's. KEY keeps the language
// last shown, so a reload starts in it; a choice made on the sign-in page becomes the person's.
let pickedSignedOut = false;

export function init() {
  const shown = localStorage.getItem(KEY);
  language = shown in DICTS ? shown : fromBrowser();
  document.documentElement.lang = language;
}

export function getLanguage() {
  return language;
}

function show(code) {
  if (!(code in DICTS)) return;
  localStorage.setItem(KEY, code);
  if (code === language) return;
  language = code;
  document.documentElement.lang = code;
  listeners.forEach((fn) => fn(code));
}

// The person picked `code` (the header, the sign-in page, Settings): shown, and saved as their
// choice when signed in (`save`: false when the caller saves it itself).
export function setLanguage(code, save = true) {
  if (!(code in DICTS)) return;
  show(code);
  if (!session.token()) pickedSignedOut = true;
  else if (save) api.putMine('/user-settings', { language: code }).catch(() => {});
}

export function onChange(fn) {
  listeners.add(fn);
}

// After a sign-in (or a reload, or a new tab): the saved choice, else the browser's; a pick
// made on the sign-in page just before becomes the saved choice.
export async function languageFromSettings() {
  try {
    if (pickedSignedOut) {
      pickedSignedOut = false;
      await api.putMine('/user-settings', { language });
      return;
    }
    const settings = await api.get('/user-settings');
    show(settings.languageChosen ? settings.language : fromBrowser());
  } catch {
    // keep what is shown
  }
}

// The server's messages (English, for every client) in the words of the page: the common ones
// by their pattern; any other stays as the server said it.
const SERVER = [
  [/^invalid username or password$/, 'err.badCredentials'],
  [/^this needs the (?<scope>\S+) permission$/, 'err.permission'],
  [/^sign-up is closed/, 'err.signupClosed'],
  [/^(?<ext>\w+) images are not supported yet/, 'lib.notImage'],
  [/^(?<ext>\w+) files are not supported yet/, 'lib.notType'],
  [/^username '(?<name>.+)' is taken$/, 'err.taken'],
  [/^(?<field>\w+): (?<min>\d+) to (?<max>\d+) characters$/, 'err.length'],
  [/^currentPassword: incorrect$/, 'err.currentPassword'],
  [/^newPassword: must differ from the current password$/, 'err.samePassword'],
  [/^the last admin cannot be demoted$/, 'err.lastAdmin'],
  [/^too many failed logins/, 'err.locked'],
  [/^(invalid or expired token|missing bearer token|the session ended)/, 'err.signedOut'],
];

export function serverMessage(message) {
  if (language === 'en' || typeof message !== 'string') return message;
  for (const [re, key] of SERVER) {
    const m = re.exec(message);
    if (m) return t(key, m.groups || {});
  }
  return message;
}

export function t(key, vars = {}) {
  const text = DICTS[language][key] ?? en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => vars[name] ?? '');
}
