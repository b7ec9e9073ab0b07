// Query suggestions as the user types (progressive enhancement: the form works without it).
// An ARIA combobox: the input owns a listbox; ArrowDown/ArrowUp move through the options,
// Enter takes the active one, Escape closes the list.
(function () {
  "use strict";
  var input = document.getElementById("q");
  if (!input || !input.dataset.suggest || !window.fetch) return;
  var list = document.createElement("ul");
  list.id = "q-suggestions";
  list.className = "suggestions";
  list.setAttribute("role", "listbox");
  // the label comes translated from the page (templates/ranking/_form.html)
  list.setAttribute("aria-label", input.dataset.suggestLabel || "Suggestions");
  list.hidden = true;
  input.parentNode.parentNode.appendChild(list);
  input.setAttribute("role", "combobox");
  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("aria-controls", list.id);
  input.setAttribute("aria-expanded", "false");
  var active = -1, timer = null, last = null, seq = 0;

  function close() {
    list.hidden = true;
    list.innerHTML = "";
    active = -1;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  }
  function mark(i) {
    var items = list.querySelectorAll("[role=option]");
    items.forEach(function (el, k) {
      el.classList.toggle("active", k === i);
      el.setAttribute("aria-selected", k === i ? "true" : "false");
    });
    active = i;
    if (i >= 0 && items[i]) input.setAttribute("aria-activedescendant", items[i].id);
    else input.removeAttribute("aria-activedescendant");
  }
  function choose(text) {
    input.value = text;
    close();
    input.form.submit();
  }
  function show(words) {
    list.innerHTML = "";
    if (!words.length) { close(); return; }
    words.forEach(function (w, k) {
      var li = document.createElement("li");
      li.id = "q-suggestion-" + k;
      li.setAttribute("role", "option");
      li.setAttribute("aria-selected", "false");
      li.textContent = w;
      li.addEventListener("mousedown", function (e) { e.preventDefault(); choose(w); });
      list.appendChild(li);
    });
    list.hidden = false;
    active = -1;
    input.setAttribute("aria-expanded", "true");
  }
  function fetchSuggestions() {
    var q = input.value;
    if (q === last) return;
    last = q;
    if (!q.trim()) { close(); return; }
    var mine = ++seq;
    var url = input.dataset.suggest + "?q=" + encodeURIComponent(q) +
      (input.dataset.its ? "&its=" + encodeURIComponent(input.dataset.its) : "");
    fetch(url, { headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : { suggestions: [] }; })
      .then(function (data) { if (mine === seq) show(data.suggestions || []); })
      .catch(function () { close(); });
  }
  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(fetchSuggestions, 120);
  });
  input.addEventListener("keydown", function (e) {
    var n = list.querySelectorAll("[role=option]").length;
    if (e.key === "ArrowDown" && n) { e.preventDefault(); mark((active + 1) % n); }
    else if (e.key === "ArrowUp" && n) { e.preventDefault(); mark(active <= 0 ? n - 1 : active - 1); }
    else if (e.key === "Enter" && active >= 0 && !list.hidden) {
      e.preventDefault();
      choose(list.querySelectorAll("[role=option]")[active].textContent);
    } else if (e.key === "Escape" && !list.hidden) { e.preventDefault(); close(); }
  });
  input.addEventListener("blur", function () { setTimeout(close, 150); });
  // "/" focuses the search box from anywhere on the page (unless typing in a field).
  document.addEventListener("keydown", function (e) {
    if (e.key === "/" && document.activeElement !== input &&
        !/^(INPUT|SELECT|TEXTAREA)$/.test(document.activeElement.tagName)) {
      e.preventDefault();
      input.focus();
      input.select();
    }
  });
})();
