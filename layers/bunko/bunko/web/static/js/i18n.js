// Words on screen in ja / en / zh (the rule: languageFromSettings below); English fills any gap.
import * as api from './api.js';
import { session } from './api.js';

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
  'lib.types': 'upload PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), HTML, Markdown, text, CSV or JSON.',
  'lib.notImage': '{ext} images are not supported yet: {types}',
  'lib.notType': '{ext} files are not supported yet: {types}',
  'lib.notFile': 'Files of this type are not supported yet: {types}',
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
  'lib.fedByUploads': 'Files here come from uploads; the server’s drop folder fills another library.',
  'admin.drop': 'Drop folder', 'admin.dropHint': 'Files put in the server’s drop folder (drop/ in its data folder) are added to this library; the CLI searches it when no --library is given. Files dropped earlier stay where they are.',
  'lib.fedBySub': 'The drop folder’s sub-folder {folders} fills this library: files put in it appear here.', 'lib.fedByDropAndSub': 'The server’s drop folder fills this library, and so does its sub-folder {folders}.', 'admin.dropHintBucket': 'Files put under drop/default/ in the server’s S3 bucket are added to this library. Files dropped earlier stay where they are.', 'admin.dropSubs': 'Sub-folders', 'admin.dropSubHint': 'A sub-folder can fill a library of its own (its files keep their path and category); the others go to the library above.', 'admin.dropSubName': 'Sub-folder', 'admin.dropSubTarget': 'Goes to the library', 'admin.dropSubAdd': 'Point it there', 'admin.dropSubNone': 'No sub-folder fills a library of its own.', 'admin.dropSubRemove': 'Give {folder}/ back to the drop folder’s library', 'admin.dropSubSaved': 'The sub-folder {folder}/ now fills {name}.', 'admin.dropSubRemoved': 'The sub-folder {folder}/ fills the drop folder’s library again.',
  'admin.dropTarget': 'Fills the library', 'admin.dropSaved': 'The drop folder now fills {name}.',
  'admin.only': 'Only admins manage users. Ask one to add a colleague or reset a password.', 'set.passwordMismatch': 'The two new passwords differ.',
  'lib.readOnly': 'You can search and chat over {name} (viewer); its owners can make you an editor to add files.', 'lib.current': 'Library', 'lib.own': 'My library', 'lib.role.viewer': 'viewer', 'lib.role.editor': 'editor', 'lib.role.owner': 'owner',
  'libs.title': 'Libraries', 'libs.none': 'No shared libraries yet.', 'libs.name': 'New library name', 'libs.create': 'Create library',
  'libs.export': 'Export library', 'libs.exportHint': 'One archive with its files, metadata, categories, members and settings (never a password or key): import it into any Bunko: here, or with bunko import.',
  'libs.exportStart': 'Write the archive', 'libs.exportConversations': 'Include conversations', 'libs.exporting': 'Exporting: {done} of {total} documents', 'libs.download': 'Download {name} ({size})',
  'libs.import': 'Import a library from an archive', 'libs.importFile': 'Archive (.zip)', 'libs.importName': 'Name for the imported library (optional)', 'libs.importButton': 'Import',
  'libs.uploading': 'Uploading and checking the archive…', 'libs.importing': 'Importing: {done} of {total} documents', 'libs.indexing': 'Indexing: {done} of {total} documents',
  'libs.imported': 'Imported {added} documents into {name}', 'libs.moveFailed': 'It stopped: {error}',
  'libs.activity': 'Activity', 'libs.activityNone': 'Nothing recorded yet.', 'libs.activityKey': 'key of {name}',
  'marks.up': 'Helpful', 'marks.down': 'Not helpful', 'marks.comment': 'Comment (optional)', 'marks.send': 'Send', 'marks.thanks': 'Thank you: the library\'s owners will see it.',
  'marks.marked': 'Marked answers', 'marks.none': 'No answer marked yet.', 'marks.missing': 'Questions it could not answer', 'marks.missingNone': 'Nothing missing yet.',
  'marks.times': 'asked {n}×', 'marks.refused': '{n} found nothing', 'marks.down.n': '{n} marked down', 'marks.also': 'Also asked as', 'marks.nearest': 'Nearest passages it had', 'marks.collect': 'Collect questions it could not answer',
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
  'lib.fromSource': 'From the source {name}', 'lib.removedSource': 'a removed source', 'lib.door.agent': 'by an agent', 'lib.door.drop': 'drop folder', 'lib.door.s3': 'S3 drop', 'lib.door.cli': 'command line',
  'src.manage': 'Sources', // the Sources page's own words: lang/en_sources.js
  'filter.needValue': 'Give a value.', 'filter.needBound': 'Give a lower bound, an upper bound, or both.', 'filter.noFiles': 'No file matches the filter.',
};
// English is in this module; the others load when first shown (the first screen of an
// English browser fetches no other language).
const DICTS = { en };
const CODES = ['en', 'ja', 'zh'];
const loaders = { ja: () => import('./lang/ja.js'), zh: () => import('./lang/zh.js') };

async function loaded(code) {
  if (!DICTS[code]) DICTS[code] = (await loaders[code]()).default;
  return code;
}
let language = 'en';
const listeners = new Set();

function fromBrowser() {
  for (const tag of navigator.languages || [navigator.language]) {
    const code = (tag || '').slice(0, 2).toLowerCase();
    if (CODES.includes(code)) return code;
  }
  return 'en';
}

// One rule (issue 49): signed in, the person's saved choice, else the browser's language;
// signed out, the one last shown in this browser, else the browser's. KEY keeps the language
// last shown, so a reload starts in it; a choice made on the sign-in page becomes the person's.
let pickedSignedOut = false;

// Resolves once the words of the language to show first are loaded (at once for English).
export async function init() {
  const shown = localStorage.getItem(KEY);
  const code = CODES.includes(shown) ? shown : fromBrowser();
  try {
    language = await loaded(code);
  } catch {
    language = 'en'; // its words could not be fetched: English
  }
  document.documentElement.lang = language;
}

export function getLanguage() {
  return language;
}

async function show(code) {
  if (!CODES.includes(code)) return;
  localStorage.setItem(KEY, code);
  if (code === language) return;
  await loaded(code);
  language = code;
  document.documentElement.lang = code;
  listeners.forEach((fn) => fn(code));
}

// The person picked `code` (the header, the sign-in page, Settings): shown, and saved as their
// choice when signed in (`save`: false when the caller saves it itself).
export function setLanguage(code, save = true) {
  if (!CODES.includes(code)) return;
  show(code).catch(() => {});
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
    await show(settings.languageChosen ? settings.language : fromBrowser());
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
    if (m) return t(key, { types: t('lib.types'), ...m.groups });
  }
  return message;
}

// A page off the first screen brings its own English words (the sign-in screen's 60 KB budget,
// issue 49); they fill in keys this dictionary lacks.
export function addEnglish(words) {
  for (const [key, text] of Object.entries(words)) en[key] ??= text;
}

export function t(key, vars = {}) {
  const text = DICTS[language][key] ?? en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => vars[name] ?? '');
}
