// A stand-in for the `vscode` module, enough for the real vscode-languageclient 11 and the
// extension to run under plain node. Real classes where behaviour matters (Disposable,
// EventEmitter, Uri, Position, Range, CodeAction, CodeActionKind, CancellationTokenSource); UI calls
// are recorded in `stub.log` and answered by scripts the tests set in `stub.script`.
// Anything not defined here is an inert auto-stub (a function returning a Disposable).
"use strict";
const path = require("node:path");

class Disposable {
  constructor(fn) { this._fn = fn; }
  static from(...ds) { return new Disposable(() => ds.forEach((d) => d && d.dispose && d.dispose())); }
  dispose() { const f = this._fn; this._fn = undefined; if (f) f(); }
}

class EventEmitter {
  constructor() {
    this._ls = new Set();
    this.event = (listener, thisArg, disposables) => {
      const l = thisArg ? listener.bind(thisArg) : listener;
      this._ls.add(l);
      const d = new Disposable(() => this._ls.delete(l));
      if (Array.isArray(disposables)) disposables.push(d);
      return d;
    };
  }
  fire(v) { for (const l of [...this._ls]) { try { l(v); } catch (e) { console.error("listener error", e); } } }
  dispose() { this._ls.clear(); }
}

class Uri {
  constructor(scheme, authority, p, query, fragment) {
    this.scheme = scheme; this.authority = authority || ""; this.path = p || ""; this.query = query || ""; this.fragment = fragment || "";
  }
  static file(p) { return new Uri("file", "", path.resolve(p)); }
  static parse(s) {
    const m = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(s);
    if (!m) return new Uri("file", "", s);
    return new Uri(m[1], m[2], decodeURIComponent(m[3]), m[4], m[5]);
  }
  static joinPath(u, ...ps) { return u.with({ path: path.posix.join(u.path, ...ps) }); }
  static from(c) { return new Uri(c.scheme, c.authority, c.path, c.query, c.fragment); }
  get fsPath() { return this.path; }
  with(c) { return new Uri(c.scheme ?? this.scheme, c.authority ?? this.authority, c.path ?? this.path, c.query ?? this.query, c.fragment ?? this.fragment); }
  toString() {
    const p = this.path.split("/").map(encodeURIComponent).join("/");
    return `${this.scheme}://${this.authority}${p}${this.query ? "?" + this.query : ""}${this.fragment ? "#" + this.fragment : ""}`;
  }
  toJSON() { return { scheme: this.scheme, authority: this.authority, path: this.path, query: this.query, fragment: this.fragment }; }
}

class Position {
  constructor(line, character) { this.line = line; this.character = character; }
  isEqual(o) { return this.line === o.line && this.character === o.character; }
  isBefore(o) { return this.line < o.line || (this.line === o.line && this.character < o.character); }
  translate() { return this; }
  with(l, c) { return new Position(l ?? this.line, c ?? this.character); }
}
class Range {
  constructor(a, b, c, d) {
    if (typeof a === "number") { this.start = new Position(a, b); this.end = new Position(c, d); }
    else { this.start = a; this.end = b; }
  }
  get isEmpty() { return this.start.isEqual(this.end); }
  contains() { return true; }
}
class Selection extends Range {
  constructor(a, b, c, d) { super(a, b, c, d); this.anchor = this.start; this.active = this.end; }
}
class Location { constructor(uri, range) { this.uri = uri; this.range = range; } }

class CodeActionKind {
  constructor(value) { this.value = value; }
  append(part) { return new CodeActionKind(this.value ? this.value + "." + part : part); }
  contains(o) { return this.value === "" || o.value === this.value || o.value.startsWith(this.value + "."); }
  intersects(o) { return this.contains(o) || o.contains(this); }
}
for (const [k, v] of Object.entries({ Empty: "", QuickFix: "quickfix", Refactor: "refactor", RefactorExtract: "refactor.extract",
  RefactorInline: "refactor.inline", RefactorMove: "refactor.move", RefactorRewrite: "refactor.rewrite", Source: "source",
  SourceOrganizeImports: "source.organizeImports", SourceFixAll: "source.fixAll", Notebook: "notebook" })) {
  CodeActionKind[k] = new CodeActionKind(v);
}
class CodeAction { constructor(title, kind) { this.title = title; this.kind = kind; } }
class Diagnostic { constructor(range, message, severity) { this.range = range; this.message = message; this.severity = severity; } }
class WorkspaceEdit { constructor() { this._e = []; } set(u, e) { this._e.push([u, e]); } entries() { return this._e; } get size() { return this._e.length; } replace(u, r, t) { this._e.push([u, [{ range: r, newText: t }]]); } }
class TextEdit { constructor(range, newText) { this.range = range; this.newText = newText; } static replace(r, t) { return new TextEdit(r, t); } }
class MarkdownString { constructor(v = "", supportThemeIcons) { this.value = v; this.supportThemeIcons = supportThemeIcons; } appendText(t) { this.value += t; return this; } appendMarkdown(t) { this.value += t; return this; } appendCodeblock(c) { this.value += "\n```\n" + c + "\n```\n"; return this; } }
class ThemeIcon { constructor(id, color) { this.id = id; this.color = color; } }
class ThemeColor { constructor(id) { this.id = id; } }
class CancellationError extends Error { constructor() { super("Canceled"); this.name = "Canceled"; } }
class CancellationTokenSource {
  constructor() {
    const em = new EventEmitter();
    this._em = em;
    this.token = { isCancellationRequested: false, onCancellationRequested: em.event };
  }
  cancel() { if (!this.token.isCancellationRequested) { this.token.isCancellationRequested = true; this._em.fire(); } }
  dispose() { this._em.dispose(); }
}
class ChatResponseTurn { constructor(response, result, participant) { this.response = response; this.result = result; this.participant = participant; } }
class ChatRequestTurn { constructor(prompt, participant) { this.prompt = prompt; this.participant = participant; } }

// Inert auto-stub: callable, every property is another auto-stub, calls return a Disposable-like.
function inert(name) {
  const fn = function () { return inertResult; };
  return new Proxy(fn, {
    get(t, p) {
      if (p === "then") return undefined;
      if (p === "dispose") return () => {};
      if (p === Symbol.toPrimitive) return () => `[stub ${name}]`;
      if (typeof p === "symbol") return undefined;
      return inert(`${name}.${p}`);
    },
  });
}
const inertResult = new Proxy({ dispose() {} }, { get(t, p) { return p in t ? t[p] : p === "then" ? undefined : inert(String(p)); } });
function withInert(obj, name) {
  return new Proxy(obj, { get(t, p) { return p in t || typeof p === "symbol" ? t[p] : (t[p] = inert(`${name}.${String(p)}`)); } });
}

// ---- recorded state and scripts ----
const stub = {
  log: [],               // every UI call: { fn, ... }
  commands: new Map(),   // id -> handler
  codeActionProviders: [],
  statusBarItems: [],
  outputChannels: [],
  webviewPanels: [],
  settings: {},          // "switchboard.servers" -> value (user settings)
  workspaceSettings: {}, // the same, from the workspace's .vscode/settings.json (wins in get, as in VS Code)
  // Sets (or with undefined, removes) a workspace-level value and fires onDidChangeConfiguration.
  setWorkspaceSetting(key, value) {
    if (value === undefined) delete stub.workspaceSettings[key]; else stub.workspaceSettings[key] = value;
    stub.events.configuration.fire({ affectsConfiguration: (s) => key === s || key.startsWith(s + ".") || s.startsWith(key + ".") });
  },
  script: {
    // (message, items, severity, options) => item | undefined | a promise of one (undefined =
    // dismissed); a promise lets a test pick a button later, like a user reading the notification
    message: () => undefined,
    // (items, options) => item | item[] | undefined
    quickPick: () => undefined,
    // (quickPick) => void; called when createQuickPick().show() runs
    createQuickPick: (qp) => qp.hide(),
    // (inputBox) => void; called when createInputBox().show() runs
    createInputBox: (box) => box.hide(),
  },
  // The quick input on screen (createQuickPick / createInputBox). As in VS Code, showing another
  // one, or showQuickPick, hides it.
  activeInput: undefined,
  events: {
    configuration: new EventEmitter(),
    openDocument: new EventEmitter(),
    closeDocument: new EventEmitter(),
    workspaceFolders: new EventEmitter(), // fire { added, removed } after setting workspace.workspaceFolders
  },
  textDocuments: [],
  contentProviders: new Map(), // scheme -> TextDocumentContentProvider
  waiters: new Set(),
  record(entry) {
    this.log.push(entry);
    for (const w of [...this.waiters]) w();
  },
};

function message(severity) {
  return async (msg, ...rest) => {
    const items = rest.filter((r) => typeof r === "string" || (r && typeof r === "object" && "title" in r));
    const options = rest.find((r) => r && typeof r === "object" && !("title" in r)) || {};
    const entry = { fn: "showMessage", severity, message: msg, items: items.map((i) => (typeof i === "string" ? i : i.title)), modal: options.modal === true, answer: undefined };
    stub.record(entry);
    const answer = await stub.script.message(msg, items, severity, options);
    entry.answer = answer === undefined ? undefined : typeof answer === "string" ? answer : answer.title;
    return answer;
  };
}

function outputChannel(name, opts) {
  const lines = [];
  const ch = { name, lines, logLevel: 2, onDidChangeLogLevel: new EventEmitter().event,
    append(s) { lines.push(s); }, appendLine(s) { lines.push(s); }, replace(s) { lines.length = 0; lines.push(s); }, clear() { lines.length = 0; },
    show() { stub.record({ fn: "outputShow", name }); }, hide() {}, dispose() {} };
  for (const lvl of ["trace", "debug", "info", "warn", "error"]) ch[lvl] = (s, ...a) => { lines.push(`[${lvl}] ${s instanceof Error ? s.message : s}${a.length ? " " + a.join(" ") : ""}`); if (process.env.STUB_VERBOSE) console.error(`[${name}] [${lvl}] ${s}`); };
  stub.outputChannels.push(ch);
  return ch;
}

// Makes input the one on screen, hiding the previous one (VS Code shows one quick input at a time).
function takeScreen(input) {
  const prev = stub.activeInput;
  stub.activeInput = input;
  if (prev && prev !== input) prev.hide();
}

function createQuickPick() {
  const accept = new EventEmitter(), hide = new EventEmitter(), itemButton = new EventEmitter(), button = new EventEmitter(), changeSel = new EventEmitter(), changeVal = new EventEmitter(), changeActive = new EventEmitter();
  const qp = {
    kind: "quickPick",
    items: [], selectedItems: [], activeItems: [], buttons: [], busy: false, enabled: true, title: undefined, placeholder: undefined, value: "", canSelectMany: false, matchOnDescription: false, matchOnDetail: false,
    step: undefined, totalSteps: undefined, ignoreFocusOut: false,
    onDidAccept: accept.event, onDidHide: hide.event, onDidTriggerItemButton: itemButton.event, onDidTriggerButton: button.event,
    onDidChangeSelection: changeSel.event, onDidChangeValue: changeVal.event, onDidChangeActive: changeActive.event,
    _visible: false, _disposed: false,
    show() { if (qp._disposed) return; takeScreen(qp); qp._visible = true; stub.record({ fn: "createQuickPick.show", qp }); setImmediate(() => stub.script.createQuickPick(qp)); },
    hide() { if (stub.activeInput === qp) stub.activeInput = undefined; if (!qp._visible) return; qp._visible = false; hide.fire(); },
    dispose() { qp.hide(); qp._disposed = true; },
    // test drivers
    _accept(item) { qp.selectedItems = [item]; accept.fire(); },
    _acceptMany(items) { qp.selectedItems = items; accept.fire(); },
    _pressItemButton(item, i) { return itemButton.fire({ item, button: item.buttons[i] }); },
    _press(b) { button.fire(b); },
  };
  return qp;
}

function createInputBox() {
  const accept = new EventEmitter(), hide = new EventEmitter(), button = new EventEmitter(), changeVal = new EventEmitter();
  const box = {
    kind: "inputBox",
    value: "", valueSelection: undefined, placeholder: undefined, prompt: undefined, password: false, validationMessage: undefined,
    buttons: [], busy: false, enabled: true, title: undefined, step: undefined, totalSteps: undefined, ignoreFocusOut: false,
    onDidAccept: accept.event, onDidHide: hide.event, onDidTriggerButton: button.event, onDidChangeValue: changeVal.event,
    _visible: false, _disposed: false,
    show() { if (box._disposed) return; takeScreen(box); box._visible = true; stub.record({ fn: "createInputBox.show", box }); setImmediate(() => stub.script.createInputBox(box)); },
    hide() { if (stub.activeInput === box) stub.activeInput = undefined; if (!box._visible) return; box._visible = false; hide.fire(); },
    dispose() { box.hide(); box._disposed = true; },
    // test drivers: typing fires onDidChangeValue like the real box; Enter is _accept
    _type(v) { box.value = v; changeVal.fire(v); },
    _accept() { accept.fire(); },
    _press(b) { button.fire(b); },
  };
  return box;
}

function textDocument(uri, text, languageId) {
  return { uri, fileName: uri.fsPath, languageId: languageId || "plaintext", version: 1, isUntitled: uri.scheme === "untitled", isDirty: false, isClosed: false, eol: 1,
    get lineCount() { return text.split("\n").length; }, getText() { return text; },
    lineAt(l) { const t = text.split("\n")[typeof l === "number" ? l : l.line] ?? ""; return { text: t, range: new Range(0, 0, 0, t.length) }; },
    offsetAt() { return 0; }, positionAt() { return new Position(0, 0); }, save: async () => true };
}

const window = withInert({
  showInformationMessage: message("info"),
  showWarningMessage: message("warning"),
  showErrorMessage: message("error"),
  async showQuickPick(items, options) {
    items = await items;
    takeScreen(undefined);
    const entry = { fn: "showQuickPick", items, options, answer: undefined };
    stub.record(entry);
    const a = await stub.script.quickPick(items, options || {});
    entry.answer = a;
    return a;
  },
  createQuickPick,
  createInputBox,
  createOutputChannel: outputChannel,
  createStatusBarItem(id, alignment, priority) {
    const item = { id, alignment, priority, text: "", tooltip: undefined, command: undefined, backgroundColor: undefined, name: undefined, visible: false,
      show() { item.visible = true; }, hide() { item.visible = false; }, dispose() { item.visible = false; } };
    stub.statusBarItems.push(item);
    return item;
  },
  async withProgress(opts, task) {
    // What the person sees of it (title, each report) and the Cancel button (_cancel).
    const cts = new CancellationTokenSource();
    const entry = { fn: "withProgress", title: opts.title, cancellable: opts.cancellable, reports: [], _cancel: () => cts.cancel() };
    stub.record(entry);
    return task({ report(v) { entry.reports.push(v); } }, cts.token);
  },
  createWebviewPanel(viewType, title) {
    const received = new EventEmitter(), disposed = new EventEmitter();
    const panel = { viewType, title, posted: [], visible: true,
      webview: { html: "", cspSource: "vscode-webview:", options: {}, onDidReceiveMessage: received.event, postMessage: async (m) => { panel.posted.push(JSON.parse(JSON.stringify(m))); return true; }, asWebviewUri: (u) => u },
      onDidDispose: disposed.event, onDidChangeViewState: new EventEmitter().event, reveal() {}, dispose() { disposed.fire(); },
      _send(m) { received.fire(m); } };
    stub.webviewPanels.push(panel);
    stub.record({ fn: "createWebviewPanel", viewType });
    return panel;
  },
  async showTextDocument(doc) { stub.record({ fn: "showTextDocument", doc }); return { document: doc }; },
  activeTextEditor: undefined,
  visibleTextEditors: [],
  tabGroups: { all: [], onDidChangeTabs: new EventEmitter().event, onDidChangeTabGroups: new EventEmitter().event },
  onDidChangeActiveTextEditor: new EventEmitter().event,
  onDidChangeVisibleTextEditors: new EventEmitter().event,
}, "window");

function getConfiguration(section) {
  const full = (k) => (section ? `${section}.${k}` : k);
  return {
    get(k, d) { const w = stub.workspaceSettings[full(k)]; const v = w === undefined ? stub.settings[full(k)] : w; return v === undefined ? d : v; },
    has(k) { return full(k) in stub.settings || full(k) in stub.workspaceSettings; },
    inspect(k) { return { key: full(k), globalValue: stub.settings[full(k)], workspaceValue: stub.workspaceSettings[full(k)] }; },
    async update(k, v) { stub.settings[full(k)] = v; stub.events.configuration.fire({ affectsConfiguration: (s) => full(k) === s || full(k).startsWith(s + ".") || s.startsWith(full(k) + ".") }); },
  };
}

const workspace = withInert({
  getConfiguration,
  onDidChangeConfiguration: stub.events.configuration.event,
  onDidOpenTextDocument: stub.events.openDocument.event,
  onDidCloseTextDocument: stub.events.closeDocument.event,
  onDidChangeTextDocument: new EventEmitter().event,
  onDidSaveTextDocument: new EventEmitter().event,
  onWillSaveTextDocument: new EventEmitter().event,
  onDidChangeWorkspaceFolders: stub.events.workspaceFolders.event,
  get textDocuments() { return stub.textDocuments; },
  notebookDocuments: [],
  workspaceFolders: undefined,
  name: undefined,
  registerTextDocumentContentProvider(scheme, provider) {
    if (stub.contentProviders.has(scheme)) throw new Error(`a content provider for ${scheme} exists`);
    stub.contentProviders.set(scheme, provider);
    return new Disposable(() => stub.contentProviders.delete(scheme));
  },
  async openTextDocument(arg) {
    const provider = arg instanceof Uri ? stub.contentProviders.get(arg.scheme) : undefined;
    if (provider) {
      const content = await provider.provideTextDocumentContent(arg, new CancellationTokenSource().token);
      const doc = textDocument(arg, content, arg.path.endsWith(".md") ? "markdown" : "plaintext");
      doc.readOnly = true;
      stub.record({ fn: "openTextDocument", doc, content });
      return doc;
    }
    const doc = typeof arg === "object" && !(arg instanceof Uri) ? textDocument(new Uri("untitled", "", "/Untitled-" + (stub.textDocuments.length + 1)), arg.content || "", arg.language) : textDocument(arg instanceof Uri ? arg : Uri.file(arg), "", "plaintext");
    stub.record({ fn: "openTextDocument", doc, content: typeof arg === "object" ? arg.content : undefined });
    return doc;
  },
  createFileSystemWatcher() { return { onDidCreate: new EventEmitter().event, onDidChange: new EventEmitter().event, onDidDelete: new EventEmitter().event, dispose() {} }; },
  getWorkspaceFolder() { return undefined; },
}, "workspace");

const languages = withInert({
  match(selector, doc) {
    const sels = Array.isArray(selector) ? selector : [selector];
    return sels.some((s) => (typeof s === "string" ? s === doc.languageId : (!s.scheme || s.scheme === doc.uri.scheme) && (!s.language || s.language === doc.languageId))) ? 10 : 0;
  },
  registerCodeActionsProvider(selector, provider, metadata) {
    const entry = { selector, provider, metadata };
    stub.codeActionProviders.push(entry);
    return new Disposable(() => { const i = stub.codeActionProviders.indexOf(entry); if (i >= 0) stub.codeActionProviders.splice(i, 1); });
  },
  createDiagnosticCollection() { const m = new Map(); return { set(u, d) { m.set(String(u), d); }, delete(u) { m.delete(String(u)); }, clear() { m.clear(); }, forEach() {}, get(u) { return m.get(String(u)); }, has(u) { return m.has(String(u)); }, dispose() {} }; },
  onDidChangeDiagnostics: new EventEmitter().event,
  getDiagnostics() { return []; },
}, "languages");

const commands = {
  registerCommand(id, fn) {
    if (stub.commands.has(id)) throw new Error(`command '${id}' already exists`);
    stub.commands.set(id, fn);
    return new Disposable(() => stub.commands.delete(id));
  },
  registerTextEditorCommand(id, fn) { return commands.registerCommand(id, fn); },
  async executeCommand(id, ...args) {
    stub.record({ fn: "executeCommand", id, args });
    const fn = stub.commands.get(id);
    if (!fn) {
      if (id.startsWith("workbench.") || id === "setContext") return undefined;
      throw new Error(`command '${id}' not found`);
    }
    return fn(...args);
  },
  async getCommands() { return [...stub.commands.keys()]; },
};

const env = withInert({ appName: "Stub Code", appRoot: "/nonexistent", language: "en", machineId: "stub", sessionId: "stub", uriScheme: "vscode", uiKind: 1,
  clipboard: { readText: async () => "", writeText: async () => {} }, openExternal: async () => true }, "env");

const vscode = {
  version: "1.100.0",
  Disposable, EventEmitter, Uri, Position, Range, Selection, Location, CodeAction, CodeActionKind, Diagnostic, WorkspaceEdit, TextEdit,
  MarkdownString, ThemeIcon, ThemeColor, CancellationError, CancellationTokenSource, ChatResponseTurn, ChatRequestTurn,
  StatusBarAlignment: { Left: 1, Right: 2 },
  ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
  QuickPickItemKind: { Separator: -1, Default: 0 },
  QuickInputButtons: { Back: { iconPath: new ThemeIcon("arrow-left"), tooltip: "Back" } },
  ViewColumn: { Active: -1, Beside: -2, One: 1, Two: 2 },
  DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
  DiagnosticTag: { Unnecessary: 1, Deprecated: 2 },
  ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
  LogLevel: { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 },
  EndOfLine: { LF: 1, CRLF: 2 },
  FileType: { Unknown: 0, File: 1, Directory: 2, SymbolicLink: 64 },
  TextDocumentSaveReason: { Manual: 1, AfterDelay: 2, FocusOut: 3 },
  CodeActionTriggerKind: { Invoke: 1, Automatic: 2 },
  window, workspace, languages, commands, env,
  extensions: withInert({ all: [], getExtension: () => undefined, onDidChange: new EventEmitter().event }, "extensions"),
  chat: undefined, // set by a test to exercise the participant
  __stub: stub,
  __textDocument: textDocument,
};

module.exports = withInert(vscode, "vscode");
