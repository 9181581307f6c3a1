/*
 * gatebot web widget. Embed with one tag:
 *
 *   <script src="https://HOST/widget.js" defer></script>
 *
 * The API base is where this script came from, or the tag's data-api="https://HOST" override.
 * A signed-in visitor: the host site's server renders data-user-id="ID" and
 * data-user-hash="HEX" (HMAC-SHA256 of the id with GATEBOT_IDENTITY_SECRET) on the tag; the
 * widget sends both when it opens a conversation and the server checks the hash; a claim the
 * server refuses (401) opens an anonymous conversation instead.
 * Everything renders inside a Shadow DOM so the host page's CSS cannot reach it, and every piece
 * of text from the server or the visitor goes in as text (textContent), never as HTML.
 *
 * While a turn runs, the server's tool events ({"type": "tool", ...}) show as one short progress
 * line ("Searching the help center…"): a fixed phrase per tool, never the tool's arguments or any
 * detail from the event; the reply removes it.
 *
 * Test hooks: [data-gatebot="launcher|panel|input|send|message|typing|progress"], and each message has
 * data-role="customer|agent|staff|error". Script API: window.gatebot.open(), .close(), .send(text).
 */
(function () {
  "use strict";

  if (window.gatebot && window.gatebot.__gatebotWidget) return; // included twice: keep the first

  var MAX_TEXT = 4000;
  var REQUEST_TIMEOUT_MS = 60000;
  var RETRY_DELAY_MS = 800;
  // A busy server (503 with Retry-After) is asked again this many times, waiting longer each time
  // (its Retry-After, doubled per attempt, capped, with jitter so shed clients do not return
  // together): about half a minute in all before the customer is asked to send it again.
  var BUSY_RETRIES = 5;
  var BUSY_MAX_WAIT_MS = 8000;
  var ECHO_TTL_MS = 30000;
  var SVG_NS = "http://www.w3.org/2000/svg";

  // Captured now: document.currentScript is only set while this script first runs.
  var script = document.currentScript || findOwnScript();
  var API = apiBase(script);
  var USER_ID = (script && script.getAttribute("data-user-id")) || "";
  var USER_HASH = (script && script.getAttribute("data-user-hash")) || "";
  // One stored conversation per signed-in user: signing out or in starts another.
  var STORE_KEY = "gatebot:conversation:" + API + (USER_ID ? ":" + USER_ID : "");
  var OPEN_KEY = "gatebot:open:" + API;
  var TITLE = (script && script.getAttribute("data-title")) || "Chat with us";
  // Site context (README: Site context): "consent" asks the visitor before the page is shared,
  // "granted" means the host site collected that consent itself; absent, nothing is ever sent.
  var CONTEXT = ((script && script.getAttribute("data-context")) || "").toLowerCase();

  function findOwnScript() {
    var scripts = document.getElementsByTagName("script");
    for (var i = scripts.length - 1; i >= 0; i--) {
      if (/\/widget\.js(\?|#|$)/.test(scripts[i].src || "")) return scripts[i];
    }
    return null;
  }

  function apiBase(el) {
    var override = el && el.getAttribute("data-api");
    var base;
    try {
      if (override) base = new URL(override, document.baseURI).href;
      else if (el && el.src) base = new URL(".", el.src).href;
      else base = location.origin + "/";
    } catch (e) {
      base = location.origin + "/";
    }
    return base.replace(/\/+$/, "");
  }

  // -- storage (may be unavailable: private mode, sandboxed frames) ------------------------------

  function storageGet(store, key) {
    try { return window[store].getItem(key); } catch (e) { return null; }
  }
  function storageSet(store, key, value) {
    try {
      if (value === null) window[store].removeItem(key);
      else window[store].setItem(key, value);
    } catch (e) { /* storage unavailable: the conversation lasts as long as the page */ }
  }
  function loadConversation() {
    try {
      var c = JSON.parse(storageGet("localStorage", STORE_KEY) || "null");
      if (c && typeof c.id === "string" && typeof c.token === "string") return c;
    } catch (e) { /* corrupt entry: start over */ }
    return null;
  }
  function saveConversation(c) {
    storageSet("localStorage", STORE_KEY, c ? JSON.stringify({ id: c.id, token: c.token }) : null);
  }

  function newId() {
    var c = window.crypto;
    if (c && typeof c.randomUUID === "function") {
      try { return c.randomUUID(); } catch (e) { /* insecure context: fall through */ }
    }
    var bytes = new Uint8Array(16);
    if (c && typeof c.getRandomValues === "function") c.getRandomValues(bytes);
    else for (var i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    var hex = Array.prototype.map.call(bytes, function (b) { return (b + 0x100).toString(16).slice(1); }).join("");
    return hex.slice(0, 8) + "-" + hex.slice(8, 12) + "-" + hex.slice(12, 16) + "-" +
      hex.slice(16, 20) + "-" + hex.slice(20);
  }

  function sleep(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }

  // -- HTTP --------------------------------------------------------------------------------------

  /** {status, ok, data, headers}; throws on a network failure or timeout. */
  async function request(method, path, body, token) {
    var ctl = typeof AbortController === "function" ? new AbortController() : null;
    var timer = ctl ? setTimeout(function () { ctl.abort(); }, REQUEST_TIMEOUT_MS) : null;
    try {
      var headers = {};
      if (body !== undefined) headers["Content-Type"] = "application/json";
      if (token) headers.Authorization = "Bearer " + token;
      var resp = await fetch(API + path, {
        method: method, headers: headers, credentials: "omit", mode: "cors",
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: ctl ? ctl.signal : undefined,
      });
      var data = null;
      try { data = await resp.json(); } catch (e) { data = null; }
      return { status: resp.status, ok: resp.ok, data: data, headers: resp.headers };
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  function serverMessage(r, fallback) {
    var err = r && r.data && r.data.error;
    return err && typeof err.message === "string" && err.message ? err.message : fallback;
  }

  function conversationPath(c) { return "/api/conversations/" + encodeURIComponent(c.id); }

  // -- the DOM -----------------------------------------------------------------------------------

  var CSS = [
    ":host{all:initial !important;display:block !important;position:fixed !important;",
    "right:20px !important;bottom:20px !important;left:auto !important;top:auto !important;",
    "width:auto !important;height:auto !important;margin:0 !important;padding:0 !important;",
    "z-index:2147483000 !important;visibility:visible !important;opacity:1 !important;",
    "transform:none !important;pointer-events:none !important;}",
    "*,*::before,*::after{box-sizing:border-box;}",
    ".root{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;",
    "color:#0f172a;-webkit-font-smoothing:antialiased;text-align:left;letter-spacing:normal;",
    "pointer-events:none;}",
    "button,textarea{font:inherit;color:inherit;margin:0;}",
    "[hidden]{display:none !important;}",
    ".launcher{pointer-events:auto;position:absolute;right:0;bottom:0;width:56px;height:56px;",
    "border:0;border-radius:50%;background:#4f46e5;color:#fff;cursor:pointer;display:flex;",
    "align-items:center;justify-content:center;box-shadow:0 6px 20px rgba(79,70,229,.35),",
    "0 2px 6px rgba(15,23,42,.2);transition:transform .15s ease,background .15s ease;padding:0;}",
    ".launcher:hover{background:#4338ca;transform:scale(1.05);}",
    ".launcher:focus-visible,.icon-btn:focus-visible,.send:focus-visible,a:focus-visible",
    "{outline:3px solid #a5b4fc;outline-offset:2px;}",
    ".launcher svg{width:26px;height:26px;}",
    ".launcher .close-icon{display:none;}",
    ".launcher[aria-expanded='true'] .chat-icon{display:none;}",
    ".launcher[aria-expanded='true'] .close-icon{display:block;}",
    ".launcher[data-unread]::after{content:'';position:absolute;top:4px;right:4px;width:12px;",
    "height:12px;border-radius:50%;background:#ef4444;border:2px solid #fff;}",
    ".panel{pointer-events:auto;position:absolute;right:0;bottom:72px;width:370px;",
    "height:560px;max-height:calc(100vh - 112px);background:#fff;border-radius:16px;",
    "box-shadow:0 18px 50px rgba(15,23,42,.22),0 2px 8px rgba(15,23,42,.08);display:flex;",
    "flex-direction:column;overflow:hidden;border:1px solid rgba(15,23,42,.06);}",
    "@media (max-width:480px){.panel{position:fixed;inset:0;width:auto;height:auto;",
    "max-height:none;border-radius:0;}.launcher[aria-expanded='true']{display:none;}}",
    ".header{display:flex;align-items:center;gap:10px;padding:14px 14px 14px 18px;",
    "background:linear-gradient(135deg,#4f46e5,#6366f1);color:#fff;}",
    ".header .dot{width:9px;height:9px;border-radius:50%;background:#4ade80;flex:none;",
    "box-shadow:0 0 0 3px rgba(74,222,128,.25);}",
    ".header .dot[data-offline]{background:#cbd5e1;box-shadow:none;}",
    ".title{flex:1;font-weight:600;font-size:15px;white-space:nowrap;overflow:hidden;",
    "text-overflow:ellipsis;}",
    ".icon-btn{border:0;background:transparent;color:#fff;width:32px;height:32px;",
    "border-radius:8px;cursor:pointer;display:flex;align-items:center;justify-content:center;padding:0;}",
    ".icon-btn:hover{background:rgba(255,255,255,.15);}",
    ".icon-btn svg{width:18px;height:18px;}",
    ".log{flex:1;overflow-y:auto;padding:16px 14px 8px;display:flex;flex-direction:column;",
    "gap:8px;background:#f8fafc;overscroll-behavior:contain;}",
    ".history,.live{display:flex;flex-direction:column;gap:8px;}",
    ".empty{color:#64748b;font-size:13px;text-align:center;padding:28px 16px 8px;}",
    ".msg{max-width:84%;padding:9px 13px;border-radius:16px;white-space:pre-wrap;",
    "overflow-wrap:anywhere;word-break:break-word;}",
    ".msg[data-role='customer']{align-self:flex-end;background:#4f46e5;color:#fff;",
    "border-bottom-right-radius:5px;}",
    ".msg[data-role='customer'][data-status='failed']{background:#a5b4fc;}",
    ".msg[data-role='agent'],.msg[data-role='staff']{align-self:flex-start;background:#fff;",
    "border:1px solid #e2e8f0;border-bottom-left-radius:5px;}",
    ".msg[data-role='staff']{background:#ecfdf5;border-color:#a7f3d0;}",
    ".who{display:block;font-size:11px;font-weight:600;color:#047857;margin-bottom:2px;}",
    ".msg[data-role='error']{align-self:center;max-width:92%;background:#fef2f2;color:#b91c1c;",
    "border:1px solid #fecaca;font-size:13px;border-radius:10px;text-align:center;}",
    ".sources{display:block;margin-top:6px;padding-top:6px;border-top:1px solid #e2e8f0;",
    "font-size:12px;color:#64748b;white-space:normal;}",
    ".card{padding:12px 14px;width:84%;}",
    ".card-title{display:block;font-weight:600;margin-bottom:4px;}",
    ".card-body{display:block;color:#475569;font-size:13px;margin-bottom:8px;white-space:normal;}",
    ".card a{display:inline-block;background:#4f46e5;color:#fff;text-decoration:none;",
    "padding:7px 12px;border-radius:8px;font-weight:500;font-size:13px;}",
    ".card a:hover{background:#4338ca;}",
    ".card .card-action{background:#4f46e5;color:#fff;border:0;cursor:pointer;font:inherit;",
    "padding:7px 12px;border-radius:8px;font-weight:500;font-size:13px;}",
    ".card .card-action:hover{background:#4338ca;}.card .card-action:disabled{opacity:.6;cursor:default;}",
    ".card [data-gatebot='escalation-option']{display:block;width:100%;text-align:left;margin-top:6px;}",
    ".typing{align-self:flex-start;background:#fff;border:1px solid #e2e8f0;border-radius:16px;",
    "border-bottom-left-radius:5px;padding:12px 14px;display:flex;gap:4px;}",
    ".typing span{width:7px;height:7px;border-radius:50%;background:#94a3b8;",
    "animation:gb-bounce 1.2s infinite ease-in-out;}",
    ".typing span:nth-child(2){animation-delay:.15s;}.typing span:nth-child(3){animation-delay:.3s;}",
    "@keyframes gb-bounce{0%,60%,100%{transform:translateY(0);opacity:.5}",
    "30%{transform:translateY(-4px);opacity:1}}",
    ".progress{align-self:flex-start;font-size:12px;font-style:italic;color:#64748b;padding:0 6px;}",
    "@media (prefers-reduced-motion:reduce){.typing span{animation:none;}",
    ".launcher{transition:none;}}",
    ".composer{display:flex;align-items:flex-end;gap:8px;padding:10px 12px;",
    "border-top:1px solid #e2e8f0;background:#fff;}",
    "textarea{flex:1;resize:none;border:1px solid #cbd5e1;border-radius:12px;padding:9px 12px;",
    "min-height:40px;max-height:120px;line-height:20px;font-size:14px;background:#fff;",
    "color:#0f172a;outline:none;display:block;width:100%;}",
    "textarea:focus{border-color:#6366f1;box-shadow:0 0 0 3px rgba(99,102,241,.18);}",
    "textarea::placeholder{color:#94a3b8;}",
    ".send{flex:none;width:40px;height:40px;border:0;border-radius:12px;background:#4f46e5;",
    "color:#fff;cursor:pointer;display:flex;align-items:center;justify-content:center;padding:0;}",
    ".send:hover{background:#4338ca;}",
    ".send:disabled{background:#c7d2fe;cursor:default;}",
    ".send svg{width:18px;height:18px;}",
    ".footer{display:flex;justify-content:space-between;padding:0 14px 8px;background:#fff;",
    "font-size:11px;color:#94a3b8;}",
    ".counter[data-near]{color:#b45309;}",
  ].join("");

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) for (var k in attrs) if (attrs[k] !== null && attrs[k] !== undefined) node.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function icon(paths, cls) {
    var svg = document.createElementNS(SVG_NS, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("fill", "none");
    svg.setAttribute("stroke", "currentColor");
    svg.setAttribute("stroke-width", "2");
    svg.setAttribute("stroke-linecap", "round");
    svg.setAttribute("stroke-linejoin", "round");
    svg.setAttribute("aria-hidden", "true");
    if (cls) svg.setAttribute("class", cls);
    paths.forEach(function (d) {
      var p = document.createElementNS(SVG_NS, "path");
      p.setAttribute("d", d);
      svg.appendChild(p);
    });
    return svg;
  }
  var CHAT_ICON = ["M21 12a8 8 0 0 1-11.6 7.1L4 20.5l1.4-4.9A8 8 0 1 1 21 12z"];
  var CLOSE_ICON = ["M6 6l12 12", "M18 6L6 18"];
  var SEND_ICON = ["M5 12h13", "M13 6l6 6-6 6"];
  var MINIMISE_ICON = ["M6 9l6 6 6-6"];

  // -- state -------------------------------------------------------------------------------------

  var conv = loadConversation(); // {id, token} or null: created lazily on first open
  var historyLoaded = false; // tried and done (or given up) loading the stored conversation
  var historyLoading = null;
  var creating = null;
  var inflight = 0; // POSTs waiting for their answer
  var buffered = []; // websocket events that arrived while a POST was in flight
  var echoes = []; // {sig, at}: what the websocket will echo of what this tab already shows
  var queue = Promise.resolve(); // sends go one at a time, in order
  var ws = null;
  var wsTimer = null;
  var wsFailures = 0;
  var isOpen = false;
  var ui = null;
  // Dedupe for the refetch after a (re)connect: ids of messages shown, and the newest id this tab
  // knows it shows everything up to (the history, a POST's answer, a refetch). Staff messages
  // always carry their id; the agent's replies to this tab's own messages are covered by the mark.
  var seen = {};
  var shownUpTo = 0;
  var refetchWanted = false;
  var refetching = null;

  function build() {
    var host = document.createElement("gatebot-widget");
    var root = host.attachShadow({ mode: "open" });
    if (root.adoptedStyleSheets !== undefined && typeof CSSStyleSheet === "function") {
      try {
        var sheet = new CSSStyleSheet();
        sheet.replaceSync(CSS); // not subject to the host page's CSP style-src, unlike <style>
        root.adoptedStyleSheets = [sheet];
      } catch (e) {
        root.appendChild(el("style", null, CSS));
      }
    } else {
      root.appendChild(el("style", null, CSS));
    }

    var wrap = el("div", { class: "root" });
    var panelId = "gatebot-panel";
    var panel = el("div", {
      class: "panel", "data-gatebot": "panel", role: "dialog", "aria-label": TITLE, id: panelId,
    });
    panel.hidden = true;

    var header = el("div", { class: "header" });
    var dot = el("span", { class: "dot", "aria-hidden": "true", "data-offline": "" });
    var title = el("div", { class: "title" }, TITLE);
    var minimise = el("button", { class: "icon-btn", type: "button", "aria-label": "Close chat" });
    minimise.appendChild(icon(MINIMISE_ICON));
    header.append(dot, title, minimise);

    var log = el("div", { class: "log", role: "log", "aria-live": "polite", "aria-relevant": "additions" });
    var empty = el("div", { class: "empty" }, "Hi! Ask us anything about our products.");
    var history = el("div", { class: "history" });
    var live = el("div", { class: "live" });
    var typing = el("div", { class: "typing", "data-gatebot": "typing", "aria-label": "Typing" });
    typing.append(el("span"), el("span"), el("span"));
    typing.hidden = true;
    var progress = el("div", { class: "progress", "data-gatebot": "progress", role: "status" });
    progress.hidden = true;
    log.append(empty, history, live, typing, progress);

    var composer = el("form", { class: "composer" });
    var input = el("textarea", {
      "data-gatebot": "input", rows: "1", maxlength: String(MAX_TEXT),
      placeholder: "Type a message…", "aria-label": "Message",
    });
    var send = el("button", { class: "send", type: "submit", "data-gatebot": "send", "aria-label": "Send" });
    send.appendChild(icon(SEND_ICON));
    send.disabled = true;
    composer.append(input, send);
    var footer = el("div", { class: "footer" });
    var hint = el("span", null, "Enter to send · Shift+Enter for a new line");
    var counter = el("span", { class: "counter" });
    footer.append(hint, counter);

    panel.append(header, log, composer, footer);

    var launcher = el("button", {
      class: "launcher", type: "button", "data-gatebot": "launcher", "aria-label": "Open chat",
      "aria-expanded": "false", "aria-controls": panelId,
    });
    launcher.append(icon(CHAT_ICON, "chat-icon"), icon(CLOSE_ICON, "close-icon"));

    wrap.append(panel, launcher);
    root.appendChild(wrap);

    launcher.addEventListener("click", function () { if (isOpen) close(); else open(); });
    minimise.addEventListener("click", function () { close(); launcher.focus(); });
    panel.addEventListener("keydown", function (e) {
      if (e.key === "Escape") { close(); launcher.focus(); }
    });
    composer.addEventListener("submit", function (e) { e.preventDefault(); submitInput(); });
    input.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
        e.preventDefault();
        submitInput();
      }
    });
    input.addEventListener("input", refreshComposer);

    ui = {
      host: host, panel: panel, log: log, empty: empty, history: history, live: live,
      typing: typing, progress: progress, input: input, send: send, counter: counter,
      launcher: launcher, dot: dot,
    };
    document.body.appendChild(host);
  }

  function refreshComposer() {
    var input = ui.input;
    input.style.height = "auto";
    input.style.height = Math.min(input.scrollHeight + 2, 120) + "px";
    ui.send.disabled = !input.value.trim();
    var n = input.value.length;
    ui.counter.textContent = n > MAX_TEXT - 500 ? n + " / " + MAX_TEXT : "";
    if (n > MAX_TEXT - 200) ui.counter.setAttribute("data-near", "");
    else ui.counter.removeAttribute("data-near");
  }

  function submitInput() {
    var text = ui.input.value;
    if (!text.trim()) return;
    ui.input.value = "";
    refreshComposer();
    send(text);
  }

  function scrollToEnd() {
    ui.log.scrollTop = ui.log.scrollHeight;
  }

  function refreshEmpty() {
    ui.empty.hidden = !!(ui.history.firstChild || ui.live.firstChild);
  }

  function append(node, container) {
    (container || ui.live).appendChild(node);
    refreshEmpty();
    scrollToEnd();
    return node;
  }

  /** A message bubble; a staff one says who wrote it (their name, else "Team"). */
  function messageNode(role, text, author, id) {
    var node = el("div", { class: "msg", "data-gatebot": "message", "data-role": role });
    if (typeof id === "number") node.setAttribute("data-message-id", String(id));
    if (role === "staff") {
      var name = typeof author === "string" && author.trim() ? author.trim() : "Team";
      node.appendChild(el("span", { class: "who", "data-gatebot": "author" }, name));
    }
    node.appendChild(document.createTextNode(String(text)));
    return node;
  }

  function addMessage(role, text, container) {
    return append(messageNode(role, text), container);
  }

  function addError(text) {
    return addMessage("error", text);
  }

  function safeHref(url) {
    try {
      var u = new URL(String(url), document.baseURI);
      return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;
    } catch (e) {
      return null;
    }
  }

  /** One reply from the agent or staff: text (with its sources) or a card. */
  function replyNode(role, reply) {
    if (!reply || typeof reply !== "object") return null;
    if (reply.type === "card") return cardNode(role, reply);
    if (typeof reply.text !== "string" || !reply.text) return null;
    var node = messageNode(role, reply.text, reply.author_name, reply.message_id);
    var titles = [];
    (Array.isArray(reply.citations) ? reply.citations : []).forEach(function (c) {
      var t = c && (c.title || c.key);
      if (typeof t === "string" && t && titles.indexOf(t) < 0) titles.push(t);
    });
    if (titles.length) {
      node.appendChild(el("span", { class: "sources", "data-gatebot": "sources" },
        (titles.length > 1 ? "Sources: " : "Source: ") + titles.join(" · ")));
    }
    return node;
  }

  function cardNode(role, reply) {
    var node = el("div", {
      class: "msg card", "data-gatebot": "message", "data-role": role, "data-card": String(reply.card || ""),
    });
    var link = null;
    if (reply.card === "booking") {
      node.appendChild(el("span", { class: "card-title" }, "Book a time"));
      node.appendChild(el("span", { class: "card-body" }, "Pick a slot that suits you."));
      var href = safeHref(reply.url);
      if (href) link = el("a", { href: href, target: "_blank", rel: "noopener noreferrer" }, "Open booking page");
      else if (reply.url) node.appendChild(el("span", { class: "card-body" }, String(reply.url)));
    } else if (reply.card === "contact") {
      var contact = typeof reply.contact === "string" ? reply.contact : "";
      node.appendChild(el("span", { class: "card-title" }, "Get in touch"));
      node.appendChild(el("span", { class: "card-body" },
        reply.outcome ? "Write to us about your " + reply.outcome + "." : "Write to us any time."));
      if (/^[^\s@<>"]+@[^\s@<>"]+$/.test(contact)) {
        link = el("a", { href: "mailto:" + contact }, contact);
      } else if (contact) {
        node.appendChild(el("span", { class: "card-body" }, contact));
      }
    } else if (reply.card === "escalation_menu") {
      escalationMenu(node, reply);
    } else if (reply.card === "offer_person") {
      offerPerson(node, reply);
    } else if (typeof reply.text === "string" && reply.text) {
      node.appendChild(el("span", { class: "card-body" }, reply.text));
    } else {
      return null;
    }
    if (link) node.appendChild(link);
    return node;
  }

  /** The answer path's offer of a person: a real button that sends the pack's own words for
   *  asking for one (the hand-off intent reads them), once. */
  function offerPerson(node, reply) {
    var message = typeof reply.message === "string" && reply.message ? reply.message : "I want to talk to a person";
    var label = typeof reply.label === "string" && reply.label ? reply.label : "Talk to a person";
    var button = el("button", { type: "button", class: "card-action", "data-gatebot": "offer-person" }, label);
    button.addEventListener("click", function () {
      if (button.disabled) return;
      button.disabled = true;
      send(message);
    });
    node.appendChild(button);
  }

  /** Pre-flight's escalation menu: the team that has the conversation, then a button per team
   *  (the recommended one marked). A click sends the option's label as the visitor's message,
   *  which moves the waiting escalation to that team; one choice per menu. Text only. */
  function escalationMenu(node, reply) {
    node.appendChild(el("span", { class: "card-title" }, "A person will take over"));
    node.appendChild(el("span", { class: "card-body" },
      "The " + String(reply.helpdesk || "support") + " team has your conversation."));
    var buttons = [];
    (Array.isArray(reply.options) ? reply.options : []).forEach(function (option) {
      if (!option || typeof option !== "object") return;
      var label = String(option.label || option.helpdesk || "");
      if (!label) return;
      var button = el("button", {
        type: "button", class: "card-action", "data-gatebot": "escalation-option",
        "data-helpdesk": String(option.helpdesk || ""),
      }, option.recommended ? label + " (recommended)" : label);
      button.addEventListener("click", function () {
        if (button.disabled) return;
        buttons.forEach(function (b) { b.disabled = true; });
        send(label);
      });
      buttons.push(button);
      node.appendChild(button);
    });
  }

  function addReply(role, reply) {
    var node = replyNode(role, reply);
    return node ? append(node) : null;
  }

  function setTyping(on) {
    ui.typing.hidden = !on;
    if (on) ui.log.append(ui.typing, ui.progress); // keep them last
    scrollToEnd();
  }

  // What a visitor is told a tool is doing: fixed phrases, so nothing the model or the tool wrote
  // (arguments, queries, errors) ever reaches the page.
  var PROGRESS = {
    "knowledge.search": "Searching the help center…",
    "knowledge.read": "Reading a source…",
  };

  function setProgress(text) {
    ui.progress.textContent = text || "";
    ui.progress.hidden = !text;
    if (text) ui.log.appendChild(ui.progress);
    scrollToEnd();
  }

  function onToolEvent(ev) {
    if (ev.event !== "requested" && ev.event !== "started") return; // the next step updates it
    var known = Object.prototype.hasOwnProperty.call(PROGRESS, ev.tool);
    setProgress(known ? PROGRESS[ev.tool] : "Working on it…");
  }

  function markUnread() {
    if (!isOpen) ui.launcher.setAttribute("data-unread", "");
  }

  // -- echoes: the websocket repeats what this tab's own POST already returned --------------------

  function expectEcho(sig) {
    echoes.push({ sig: sig, at: Date.now() });
  }

  function consumeEcho(sig) {
    var now = Date.now();
    echoes = echoes.filter(function (e) { return now - e.at < ECHO_TTL_MS; });
    for (var i = 0; i < echoes.length; i++) {
      if (echoes[i].sig === sig) { echoes.splice(i, 1); return true; }
    }
    return false;
  }

  function replySig(reply) { return "reply:" + JSON.stringify(reply); }
  function customerSig(text) { return "customer:" + text; }

  function onEvent(ev) {
    if (!ev || typeof ev !== "object") return;
    if (ev.type === "tool") { onToolEvent(ev); return; } // progress shows at once, never buffered
    // Pre-flight's fixed sentence, in the visitor's language ("Je regarde cela."): never a flow's name.
    if (ev.type === "progress" && typeof ev.text === "string") { setProgress(ev.text); return; }
    if (inflight) { buffered.push(ev); return; } // decided once this tab's own answer is in
    handleEvent(ev);
  }

  function handleEvent(ev) {
    var shown = false;
    if (ev.type === "message" && typeof ev.text === "string") {
      var role = ev.role === "staff" || ev.role === "agent" ? ev.role : "customer";
      if (typeof ev.id === "number" && !markSeen(ev.id)) return; // a refetch showed it
      if (role === "customer" && consumeEcho(customerSig(ev.text))) return;
      append(messageNode(role, ev.text, null, ev.id));
      shown = true;
    } else if (ev.type === "reply" && ev.reply) {
      setProgress(null); // the turn answered: its progress line goes
      if (consumeEcho(replySig(ev.reply))) return;
      shown = !!addReply(ev.role === "staff" ? "staff" : "agent", ev.reply);
    } else if (ev.type === "replies" && Array.isArray(ev.replies)) {
      ev.replies.forEach(function (r) {
        var role = r && r.role === "agent" ? "agent" : "staff"; // sent outside a turn: a person
        if (r && typeof r.message_id === "number" && !markSeen(r.message_id)) return;
        if (addReply(role, r)) shown = true;
      });
    }
    if (shown) markUnread();
  }

  function flushBuffered() {
    var events = buffered;
    buffered = [];
    events.forEach(handleEvent);
    if (refetchWanted) refetch();
  }

  /** True the first time a message id is shown; false when it is on the page already. */
  function markSeen(id) {
    if (seen[id]) return false;
    seen[id] = true;
    return true;
  }

  function sawUpTo(id) {
    if (typeof id === "number" && id > shownUpTo) shownUpTo = id;
  }

  /** After the websocket (re)connects: what was said while it was down (a staff message sent
   *  during a reconnect), once. A staff message shows unless its id is on the page; any other
   *  only when newer than what this tab knows it shows. Waits for this tab's own sends. */
  function refetch() {
    if (!conv || !historyLoaded) return;
    if (inflight || refetching) { refetchWanted = true; return; }
    refetchWanted = false;
    var c = conv;
    refetching = (async function () {
      var r;
      try { r = await request("GET", conversationPath(c), undefined, c.token); } catch (e) { return; }
      if (conv !== c || inflight || !r.ok || !r.data || !Array.isArray(r.data.messages)) {
        if (conv === c && inflight) refetchWanted = true;
        return;
      }
      var shown = false;
      var upTo = shownUpTo;
      r.data.messages.forEach(function (m) {
        if (!m || typeof m.id !== "number" || typeof m.text !== "string" || !m.text) return;
        if (seen[m.id] || (m.role !== "staff" && m.id <= upTo)) { seen[m.id] = true; return; }
        seen[m.id] = true;
        append(historyNode(m));
        shown = true;
      });
      r.data.messages.forEach(function (m) { if (m) sawUpTo(m.id); });
      if (shown) markUnread();
    })();
    refetching.then(function () {
      refetching = null;
      if (refetchWanted) refetch();
    }, function () { refetching = null; });
  }

  function historyNode(m) {
    var role = m.role === "agent" || m.role === "staff" ? m.role : "customer";
    var author = m.author && typeof m.author === "object" ? m.author.name : null;
    return messageNode(role, m.text, author, m.id);
  }

  // -- the websocket -----------------------------------------------------------------------------

  function setOnline(on) {
    if (on) ui.dot.removeAttribute("data-offline");
    else ui.dot.setAttribute("data-offline", "");
  }

  function connect() {
    if (!conv || ws || wsTimer || typeof WebSocket !== "function") return;
    var c = conv;
    var url = API.replace(/^http/i, "ws") + conversationPath(c) + "/events?token=" + encodeURIComponent(c.token);
    var sock;
    try { sock = new WebSocket(url); } catch (e) { return; }
    ws = sock;
    sock.onopen = function () {
      wsFailures = 0;
      setOnline(true);
      refetch(); // whatever was said while there was no socket
    };
    sock.onmessage = function (e) {
      var ev;
      try { ev = JSON.parse(e.data); } catch (err) { return; }
      onEvent(ev);
    };
    sock.onclose = function () {
      if (ws === sock) ws = null;
      setOnline(false);
      if (conv !== c) return; // conversation replaced or forgotten: nothing to reconnect to
      var delay = Math.min(30000, 1000 * Math.pow(2, wsFailures++));
      wsTimer = setTimeout(function () { wsTimer = null; connect(); }, delay);
    };
  }

  function disconnect() {
    if (wsTimer) { clearTimeout(wsTimer); wsTimer = null; }
    if (ws) { var s = ws; ws = null; s.onclose = null; s.close(); }
    setOnline(false);
  }

  function forgetConversation() {
    conv = null;
    saveConversation(null);
    disconnect();
  }

  // -- the conversation --------------------------------------------------------------------------

  function ensureConversation() {
    if (conv) return Promise.resolve(conv);
    if (!creating) {
      creating = (async function () {
        var claim = USER_ID ? { user_id: USER_ID, user_hash: USER_HASH } : {};
        var r = await request("POST", "/api/conversations", claim);
        if (r.status === 401 && claim.user_id) {
          // The bot could not verify the signed identity (a wrong hash, a rotated secret): chat on
          // as an anonymous visitor, who owns nothing until shown otherwise, rather than not at all.
          delete claim.user_id;
          delete claim.user_hash;
          r = await request("POST", "/api/conversations", claim);
        }
        if (r.status !== 201 || !r.data || typeof r.data.id !== "string") {
          throw new Error(serverMessage(r, "the chat service answered " + r.status));
        }
        conv = { id: r.data.id, token: r.data.token };
        saveConversation(conv);
        historyLoaded = true; // new: nothing earlier to load
        connect();
        siteContext(conv);
        return conv;
      })();
      creating.then(function () { creating = null; }, function () { creating = null; });
    }
    return creating;
  }

  /** Show the stored conversation's messages. Resolves true when done (or nothing to do). */
  function loadHistory() {
    if (!conv || historyLoaded) return Promise.resolve(true);
    if (historyLoading) return historyLoading;
    var c = conv;
    historyLoading = (async function () {
      var r;
      try {
        r = await request("GET", conversationPath(c), undefined, c.token);
      } catch (e) {
        return false;
      }
      if (conv !== c) return true;
      if (r.status === 401 || r.status === 404) { // gone or not ours any more: start afresh
        forgetConversation();
        historyLoaded = true;
        return true;
      }
      if (!r.ok || !r.data || !Array.isArray(r.data.messages)) return false;
      var nodes = [];
      r.data.messages.forEach(function (m) {
        if (!m || typeof m.text !== "string" || !m.text) return;
        if (typeof m.id === "number") { seen[m.id] = true; sawUpTo(m.id); }
        nodes.push(historyNode(m));
      });
      ui.history.replaceChildren.apply(ui.history, nodes);
      refreshEmpty();
      scrollToEnd();
      historyLoaded = true;
      connect();
      return true;
    })();
    historyLoading.then(function () { historyLoading = null; }, function () { historyLoading = null; });
    return historyLoading;
  }

  /** Before the panel shows anything new: the stored history, or a new conversation. */
  var preparing = null;
  function prepare() {
    if (!preparing) {
      preparing = (async function () {
        if (conv && !historyLoaded) {
          var ok = await loadHistory();
          if (!ok) {
            addError("Couldn't load your earlier messages. Check your connection.");
            historyLoaded = true; // don't load later: it would repeat what is shown from now on
          }
        }
        if (!conv) await ensureConversation();
      })();
      preparing.then(function () { preparing = null; }, function () { preparing = null; });
    }
    return preparing;
  }

  function fail(bubble, text) {
    bubble.setAttribute("data-status", "failed");
    addError(text);
  }

  function restoreInput(text) {
    if (!ui.input.value) {
      ui.input.value = text;
      refreshComposer();
    }
  }

  /** How long to wait before asking a busy server again: its Retry-After, doubled per try. */
  function busyWait(r, busyTries) {
    var asked = parseInt(r.headers.get("Retry-After") || "1", 10);
    var base = Math.max(1, isNaN(asked) ? 1 : asked) * 1000 * Math.pow(2, busyTries);
    return Math.min(BUSY_MAX_WAIT_MS, base) * (0.75 + Math.random() * 0.5);
  }

  async function postWithRetry(c, body) {
    var failures = 0;
    for (var busyTries = 0; ; ) {
      try {
        var r = await request("POST", conversationPath(c) + "/messages", body, c.token);
        if (r.status === 503 && busyTries < BUSY_RETRIES) {
          var wait = busyWait(r, busyTries++);
          setProgress("We're busy right now; trying again in " + Math.ceil(wait / 1000) + " s…");
          await sleep(wait);
          continue; // the same client_message_id: a turn runs once whatever the retries
        }
        if (r.status < 500 || failures > 0) return r;
      } catch (e) {
        if (failures > 0) return null; // the same client_message_id twice: no second turn
      }
      failures++;
      await sleep(RETRY_DELAY_MS);
    }
  }

  async function deliver(text, bubble) {
    inflight++;
    setTyping(true);
    try {
      try {
        await prepare();
      } catch (e) {
        fail(bubble, "Couldn't reach the chat service, so your message was not sent. Please try again.");
        restoreInput(text);
        return false;
      }
      var c = conv;
      expectEcho(customerSig(text));
      var r = await postWithRetry(c, { text: text, client_message_id: newId() });
      if (!r) {
        fail(bubble, "The connection failed, so your message may not have been delivered. Please try again.");
        restoreInput(text);
        return false;
      }
      if (r.ok && r.data && Array.isArray(r.data.replies)) {
        bubble.removeAttribute("data-status");
        sawUpTo(r.data.last_message_id);
        setProgress(null);
        r.data.replies.forEach(function (reply) {
          expectEcho(replySig(reply));
          addReply("agent", reply);
        });
        return true;
      }
      if (r.status === 401 || r.status === 404) {
        if (conv === c) forgetConversation();
        historyLoaded = true;
        fail(bubble, "This conversation is no longer available, so your message was not sent. " +
          "Send it again to start a new conversation.");
        restoreInput(text);
        return false;
      }
      var message = serverMessage(r, "Your message was not sent (error " + r.status + ").");
      if (r.status === 503) {
        message = "We're very busy right now and couldn't take your message. Please send it again in a moment.";
        restoreInput(text);
      } else if (r.status === 429) {
        var wait = r.headers.get("Retry-After"); // readable cross-origin only if the server exposes it
        if (wait && /^\d+$/.test(wait)) message += " (try again in " + wait + " s)";
        restoreInput(text);
      }
      fail(bubble, message.charAt(0).toUpperCase() + message.slice(1));
      return false;
    } finally {
      inflight--;
      if (!inflight) {
        setTyping(false);
        setProgress(null);
        flushBuffered();
      }
    }
  }

  // -- site context, only with consent ----------------------------------------------------------

  /** The page as shared: no query string or fragment (they may hold a visitor's data). */
  function pageOf(href) {
    try { var u = new URL(href); return u.origin + u.pathname; } catch (e) { return ""; }
  }

  async function shareContext(c, consent) {
    var body = consent === "declined" ? { consent: consent } : {
      consent: consent, url: pageOf(location.href), title: String(document.title || "").slice(0, 300),
      referrer: pageOf(document.referrer || ""),
    };
    var r = await request("POST", conversationPath(c) + "/context", body, c.token);
    if (r.ok && r.data && typeof r.data.greeting === "string" && consent !== "declined") {
      addMessage("agent", r.data.greeting).setAttribute("data-gatebot-greeting", "");
    }
  }

  /** A new conversation: share the page at once when the site collected consent, ask the
   *  visitor when it asks us to, and otherwise send nothing. */
  function siteContext(c) {
    if (CONTEXT === "granted") { shareContext(c, "site").catch(function () {}); return; }
    if (CONTEXT !== "consent" || !ui) return;
    var node = el("div", { class: "msg card", "data-gatebot": "consent", "data-role": "agent" });
    node.appendChild(el("span", { class: "card-body" },
      "May the assistant see which page of this site you are on? It helps it answer about what you are looking at."));
    var yes = el("button", { type: "button", class: "card-action", "data-gatebot": "consent-yes" }, "Share this page");
    var no = el("button", { type: "button", class: "card-action", "data-gatebot": "consent-no" }, "No thanks");
    function answer(consent) {
      if (yes.disabled) return;
      yes.disabled = no.disabled = true;
      node.remove();
      refreshEmpty();
      shareContext(c, consent).catch(function () {});
    }
    yes.addEventListener("click", function () { answer("visitor"); });
    no.addEventListener("click", function () { answer("declined"); });
    node.append(yes, " ", no);
    append(node);
  }

  // -- the public API ----------------------------------------------------------------------------

  function open() {
    if (!ui) return;
    isOpen = true;
    ui.panel.hidden = false;
    ui.launcher.setAttribute("aria-expanded", "true");
    ui.launcher.setAttribute("aria-label", "Close chat");
    ui.launcher.removeAttribute("data-unread");
    storageSet("sessionStorage", OPEN_KEY, "1");
    scrollToEnd();
    try { ui.input.focus({ preventScroll: true }); } catch (e) { ui.input.focus(); }
    if (!inflight && (!conv || !historyLoaded)) {
      prepare().catch(function () {
        addError("Couldn't reach the chat service. Check your connection and try again.");
      });
    }
  }

  function close() {
    if (!ui) return;
    isOpen = false;
    ui.panel.hidden = true;
    ui.launcher.setAttribute("aria-expanded", "false");
    ui.launcher.setAttribute("aria-label", "Open chat");
    storageSet("sessionStorage", OPEN_KEY, null);
  }

  /** Send a message as the visitor. Resolves true when the agent answered. */
  function send(text) {
    text = text === undefined || text === null ? "" : String(text);
    if (!ui || !text.trim()) return Promise.resolve(false);
    if (!isOpen) open();
    var bubble = addMessage("customer", text);
    bubble.setAttribute("data-status", "sending");
    var job = queue.then(function () { return deliver(text, bubble); });
    queue = job.catch(function () { return false; });
    return job;
  }

  window.gatebot = { open: open, close: close, send: send, __gatebotWidget: true };

  function start() {
    build();
    if (storageGet("sessionStorage", OPEN_KEY)) open();
    else if (conv) loadHistory().catch(function () {}); // returning visitor: history and live events
  }

  if (document.body) start();
  else document.addEventListener("DOMContentLoaded", start, { once: true });
})();
