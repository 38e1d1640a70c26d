// agentbox operator view: the compose box (issue 26). Posts as the box's
// operator with the owner key from sessionStorage, sent only as a Bearer
// header with a JSON body (never a cookie, a URL or a form), then asks the
// page to refresh. The server renders everything shown; this only sends.
"use strict";
(function () {
  var storeName = "agentbox-owner-key";

  function newKey() {
    if (window.crypto && crypto.randomUUID) { return "view-" + crypto.randomUUID(); }
    var b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return "view-" + Array.prototype.map.call(b, function (x) { return ("0" + x.toString(16)).slice(-2); }).join("");
  }

  function checked(form, name) {
    var out = [];
    form.querySelectorAll("input[name=" + name + "]:checked").forEach(function (c) { out.push(c.value); });
    return out;
  }

  function post(form) {
    var k = sessionStorage.getItem(storeName);
    var status = form.querySelector(".compose-status");
    var body = form.elements.body.value;
    if (!k || !body.trim()) { return; }
    var dest, mentions = [], requests = [];
    if (form.dataset.kind === "room") {
      dest = { kind: "room", room_id: form.dataset.room };
      mentions = checked(form, "mention");
      requests = checked(form, "request");
    } else {
      var to = form.elements.to.value;
      dest = { kind: "dm", recipient_agent_id: to };
      if (form.elements.ask.checked) { requests.push(to); }
    }
    // One idempotency key per message: a retry after a lost answer posts
    // it once; a refusal or an edit makes a new message.
    if (!form.dataset.idem) { form.dataset.idem = newKey(); }
    var payload = { destination: dest, body_md: body, idempotency_key: form.dataset.idem };
    if (mentions.length) { payload.mentions = mentions; }
    if (requests.length) { payload.requests = requests; }
    var button = form.querySelector("button[type=submit]");
    button.disabled = true;
    form.dataset.busy = "1";
    status.textContent = "posting…";
    fetch("/ui/api/post", {
      method: "POST",
      headers: { "Authorization": "Bearer " + k, "Content-Type": "application/json" },
      body: JSON.stringify(payload), credentials: "omit", cache: "no-store"
    }).then(function (res) {
      return res.text().then(function (text) { return { res: res, text: text }; });
    }).then(function (r) {
      if (r.res.ok) {
        form.reset();
        delete form.dataset.idem;
        status.textContent = "posted";
        status.className = "compose-status posted";
      } else {
        if (r.res.status < 500 && r.res.status !== 429) { delete form.dataset.idem; }
        status.textContent = r.text; // the server's refusal: a code and a fixed message
        status.className = "compose-status refused";
      }
    }).catch(function () {
      status.textContent = "not sent (offline); post again to retry";
      status.className = "compose-status refused";
    }).then(function () {
      button.disabled = false;
      delete form.dataset.busy;
      window.dispatchEvent(new Event("agentbox:refresh"));
    });
  }

  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (!form.classList || !form.classList.contains("compose")) { return; }
    ev.preventDefault();
    post(form);
  });
  document.addEventListener("input", function (ev) {
    var form = ev.target.form;
    if (form && form.classList.contains("compose") && !form.dataset.busy) { delete form.dataset.idem; }
  });

  // agentboxKeepCompose hands the page's refresh (app.js) the compose box
  // on the page, which it keeps in place of the fresh one while the page
  // shows the same destination: what is typed, checked or being sent
  // survives every refresh (the targets are those of the page as opened).
  window.agentboxKeepCompose = function () {
    return document.querySelector("form.compose");
  };
})();
