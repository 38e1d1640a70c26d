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

  // route maps the hash (#page/id?cursors) to its fragment's address; the
  // query carries the lists' opaque cursors (never the key) through as is.
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
      case "requests":
        return "/ui/api/requests" + query;
    }
    return "/ui/api/box" + query;
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
