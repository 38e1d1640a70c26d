// agentbox operator view: keeps the owner key in sessionStorage (this tab
// only), fetches server-rendered fragments with it as a Bearer header, and
// refreshes the current one every few seconds. No data lives here.
"use strict";
(function () {
  var REFRESH_MS = 3000;
  var storeName = "agentbox-owner-key";
  var latest = 0; // the newest request's number: older answers are dropped

  function $(id) { return document.getElementById(id); }
  function key() { return sessionStorage.getItem(storeName); }

  // route maps the hash (#page/id?cursors) to its fragment's address, or
  // null for a page that does not exist; the query carries the lists'
  // opaque cursors and filters (never the key) through as is.
  function route() {
    var h = location.hash.replace(/^#/, "");
    var q = h.indexOf("?");
    var query = q >= 0 ? h.slice(q) : "";
    var parts = (q >= 0 ? h.slice(0, q) : h).split("/");
    switch (parts[0]) {
      case "room":
        return "/ui/api/room/" + encodeURIComponent(parts[1] || "") + query;
      case "agent":
        return "/ui/api/agent/" + encodeURIComponent(parts[1] || "") + query;
      case "dm":
        return "/ui/api/dm/" + encodeURIComponent(parts[1] || "") + "/" +
          encodeURIComponent(parts[2] || "") + query;
      case "message":
        return "/ui/api/message/" + encodeURIComponent(parts[1] || "") + query;
      case "requests":
      case "activity":
      case "files":
        return "/ui/api/" + parts[0] + query;
      case "":
      case "box":
        return "/ui/api/box" + query;
    }
    return null;
  }

  // notFound replaces the page with a not-found page (the navigation stays):
  // a wrong id or address never leaves a blank or a stale page. The
  // server's message is shown as text.
  function notFound(message) {
    var view = $("view");
    view.textContent = "";
    var section = document.createElement("section");
    section.className = "notfound";
    section.setAttribute("data-page", "notfound");
    var h = document.createElement("h2");
    h.textContent = "Not found";
    var p = document.createElement("p");
    p.textContent = message || "There is no such page in this box.";
    var back = document.createElement("p");
    var a = document.createElement("a");
    a.href = "#box";
    a.textContent = "Back to the box";
    back.appendChild(a);
    section.appendChild(h);
    section.appendChild(p);
    section.appendChild(back);
    view.appendChild(section);
  }

  function showLogin(message) {
    $("login").hidden = false;
    $("nav").hidden = true;
    $("view").textContent = "";
    $("error").textContent = message || "";
  }

  function load() {
    var k = key();
    if (!k) { showLogin(""); return; }
    var seq = ++latest;
    var url = route();
    if (url === null) {
      $("login").hidden = true;
      $("nav").hidden = false;
      notFound("");
      return;
    }
    fetch(url, { headers: { "Authorization": "Bearer " + k }, credentials: "omit", cache: "no-store" })
      .then(function (res) {
        return res.text().then(function (body) { return { res: res, body: body }; });
      })
      .then(function (r) {
        if (seq !== latest) { return; }
        if (r.res.status === 401) {
          sessionStorage.removeItem(storeName);
          showLogin("The key was refused.");
          return;
        }
        if (r.res.status === 404 || r.res.status === 400) {
          $("login").hidden = true;
          $("nav").hidden = false;
          notFound(r.body);
          return;
        }
        if (!r.res.ok) {
          $("status").textContent = r.body;
          return;
        }
        $("login").hidden = true;
        $("nav").hidden = false;
        var openThreads = {};
        document.querySelectorAll("li.message > details[open]").forEach(function (d) {
          openThreads[d.parentNode.id] = true;
        });
        var compose = window.agentboxKeepCompose && window.agentboxKeepCompose(); // compose.js
        // The fragment is rendered and sanitized by the server; scripts in
        // it would not run (innerHTML, and the CSP forbids inline script).
        $("view").innerHTML = r.body;
        var fresh = document.querySelector("form.compose");
        if (compose && fresh && fresh.dataset.key === compose.dataset.key) { fresh.replaceWith(compose); }
        Object.keys(openThreads).forEach(function (id) {
          var li = document.getElementById(id);
          if (li && li.querySelector("details")) { li.querySelector("details").open = true; }
        });
        $("status").textContent = "updated " + new Date().toLocaleTimeString();
      })
      .catch(function () {
        if (seq !== latest) { return; }
        $("status").textContent = "offline; retrying";
      });
  }

  function start() {
    $("login").addEventListener("submit", function (ev) {
      ev.preventDefault();
      var k = $("key").value.trim();
      $("key").value = "";
      if (!k) { return; }
      sessionStorage.setItem(storeName, k);
      load();
    });
    $("logout").addEventListener("click", function () {
      sessionStorage.removeItem(storeName);
      showLogin("");
    });
    window.addEventListener("hashchange", load);
    window.addEventListener("agentbox:refresh", load);
    load();
    setInterval(load, REFRESH_MS);
  }

  document.addEventListener("DOMContentLoaded", start);
})();
