// The inspector's one script: escalation actions, a turn's intent label, rewind and fork
// buttons, opening the checkpoint a graph node links to, and starting and following a replay.
// Every POST carries the session's CSRF token from the page.
"use strict";
(function () {
  var meta = document.querySelector('meta[name="csrf"]');
  var csrf = meta ? meta.getAttribute("content") : "";

  function post(path, body) {
    return fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body),
    }).then(function (resp) {
      return resp.json().then(function (data) {
        if (!resp.ok) {
          var err = data && data.error ? data.error.message : "HTTP " + resp.status;
          throw new Error(err);
        }
        return data;
      });
    });
  }

  function escalationAction(button) {
    var box = button.closest(".esc-actions");
    var id = box.getAttribute("data-escalation");
    var verb = button.getAttribute("data-verb");
    var text = box.querySelector('textarea[name="text"]');
    var outcome = box.querySelector('[name="outcome"]');
    var result = box.querySelector(".result");
    var body = { text: verb === "reply" ? text.value : "", outcome: outcome.value };
    result.textContent = "…";
    post("/inspector/api/escalations/" + encodeURIComponent(id) + "/" + verb, body)
      .then(function (data) {
        var esc = data.escalation;
        result.textContent = verb === "reply" ? "sent (" + esc.status + ")" : esc.status;
        var row = box.closest("tr");
        var cell = row && row.querySelector("td.status");
        if (cell) cell.textContent = esc.status;
        if (verb === "reply") text.value = "";
      })
      .catch(function (err) { result.textContent = "refused: " + err.message; });
  }

  function labelTurn(button) {
    var form = button.closest(".label-turn");
    var id = form.getAttribute("data-turn");
    var intent = form.querySelector('select[name="intent"]').value;
    var result = form.querySelector(".result");
    result.textContent = "…";
    post("/inspector/api/turns/" + encodeURIComponent(id) + "/label", { intent: intent })
      .then(function (data) {
        var how = data.confirmed ? "confirmed" : "corrected from " + (data.read.answer || "no read");
        result.textContent = "labelled " + data.label.intent + " (" + how + ")";
      })
      .catch(function (err) { result.textContent = "refused: " + err.message; });
  }

  function runAction(button) {
    var box = button.closest(".actions");
    var run = box.getAttribute("data-run");
    var index = parseInt(box.getAttribute("data-index"), 10);
    var result = box.querySelector(".result");
    result.hidden = false;
    var base = "/inspector/api/runs/" + encodeURIComponent(run) + "/";
    if (button.getAttribute("data-action") === "rewind") {
      post(base + "rewind", { at_checkpoint: index })
        .then(function (cp) { result.textContent = JSON.stringify(cp, null, 2); })
        .catch(function (err) { result.textContent = "refused: " + err.message; });
      return;
    }
    var output;
    try {
      output = JSON.parse(box.querySelector('textarea[name="output"]').value);
    } catch (err) {
      result.textContent = "the output is not JSON: " + err.message;
      return;
    }
    var allow = box.querySelector('input[name="allow_side_effects"]').checked;
    post(base + "fork", { at_checkpoint: index, output: output, allow_side_effects: allow })
      .then(function (data) { window.location.assign("/inspector/runs/" + data.run.id); })
      .catch(function (err) { result.textContent = "refused: " + err.message; });
  }

  function startReplay(button) {
    var form = button.closest("form");
    var result = form.querySelector(".result");
    var body = {
      pack: form.querySelector('input[name="pack"]').value,
      since: form.querySelector('input[name="since"]').value,
      conversations: form.querySelector('input[name="conversations"]').value,
    };
    result.textContent = "…";
    button.disabled = true;
    post("/inspector/api/replay", body)
      .then(function () { window.location.reload(); })
      .catch(function (err) {
        result.textContent = "refused: " + err.message;
        button.disabled = false;
      });
  }

  // While a replay runs, ask for its state every two seconds; reload when it is over.
  function pollReplay() {
    var shown = document.querySelector('[data-replay-state="running"]');
    if (!shown) return;
    var timer = window.setInterval(function () {
      fetch("/inspector/api/replay", { credentials: "same-origin" })
        .then(function (resp) { return resp.json(); })
        .then(function (data) {
          if (data.state !== "running") {
            window.clearInterval(timer);
            window.location.reload();
            return;
          }
          shown.textContent = "Replaying… " + data.done + " of " + data.conversations +
            " conversation(s)";
        })
        .catch(function () { window.clearInterval(timer); });
    }, 2000);
  }

  function openCheckpoint() {
    var target = window.location.hash && document.getElementById(window.location.hash.slice(1));
    if (target && target.tagName === "DETAILS") target.open = true;
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button");
    if (!button) return;
    if (button.hasAttribute("data-verb")) escalationAction(button);
    else if (button.hasAttribute("data-label")) labelTurn(button);
    else if (button.hasAttribute("data-action")) runAction(button);
    else if (button.hasAttribute("data-replay-start")) startReplay(button);
  });
  window.addEventListener("hashchange", openCheckpoint);
  document.addEventListener("DOMContentLoaded", openCheckpoint);
  document.addEventListener("DOMContentLoaded", pollReplay);
})();
