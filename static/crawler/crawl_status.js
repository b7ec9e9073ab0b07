// Refreshes the crawl status page every two seconds, without reloading it: state, buttons
// (forms posting to the action urls with the CSRF token), banner, counters, rates, chart and
// errors by kind, and the link-analysis panel (link_analysis.js). The page works without it:
// every value is rendered by the server first.
(function () {
  "use strict";
  const main = document.querySelector("[data-status-url]");
  if (!main || !window.fetch) { return; }
  const url = main.dataset.statusUrl;
  const SVG = "http://www.w3.org/2000/svg";

  const cell = window.yioopyLive.cell;

  // Refill a two-column table of [label, value] rows, or one row saying it is empty.
  function fillRows(tbody, rows, empty) {
    tbody.replaceChildren();
    if (!rows.length) { const tr = document.createElement("tr"); tr.append(cell(empty)); tbody.append(tr); }
    for (const [label, value] of rows) {
      const tr = document.createElement("tr");
      const th = document.createElement("th"); th.scope = "row"; th.textContent = label;
      tr.append(th, cell(value)); tbody.append(tr);
    }
  }

  // A table of failures by kind ([label, count, example url: message] rows), or "None failed.",
  // and the note (its <span>) saying why, hidden when there is nothing to say.
  function renderFailures(tbodySelector, rows, noteId, note, emptyText) {
    const tbody = document.querySelector(tbodySelector);
    tbody.replaceChildren();
    for (const row of rows) {
      const tr = document.createElement("tr");
      const th = document.createElement("th"); th.scope = "row"; th.textContent = row.label;
      tr.append(th, cell(row.count), cell(row.url + ": " + row.message)); tbody.append(tr);
    }
    if (!rows.length) {
      const tr = document.createElement("tr"); const td = cell(emptyText || "None failed."); td.colSpan = 3;
      tr.append(td); tbody.append(tr);
    }
    const box = document.getElementById(noteId);
    box.querySelector("span").textContent = note;
    box.hidden = !note;
  }

  // robots.txt failures by kind, and why a crawl that ended with nothing indexed did.
  function renderRobots(data) {
    document.getElementById("crawl-robots-fetches").textContent = data.robots_fetches;
    renderFailures("#crawl-robots-failures tbody", data.robots_failures, "crawl-end-reason",
      data.end_reason);
  }

  // The buttons the state allows (rebuilt only when they change, so a click is not lost).
  function renderButtons(actions) {
    const box = document.getElementById("crawl-buttons");
    const token = document.getElementById("crawl-csrf");
    if (!box || box.dataset.actions === actions.join(" ")) { return; }
    box.dataset.actions = actions.join(" ");
    box.querySelectorAll("form").forEach((form) => form.remove());
    for (const action of actions) {
      if (!token) { break; }
      const form = document.createElement("form");
      form.method = "post"; form.style.display = "inline";
      form.action = box.dataset.actionUrl.replace("ACTION", action);
      const csrf = document.createElement("input");
      csrf.type = "hidden"; csrf.name = "csrfmiddlewaretoken"; csrf.value = token.value;
      const button = document.createElement("button");
      button.type = "submit"; button.className = "button"; button.name = "crawl-" + action;
      button.textContent = action.charAt(0).toUpperCase() + action.slice(1);
      form.append(csrf, button); box.append(form);
    }
  }

  // A banner of the last action ("start done; now running") is replaced once the state moves on.
  function renderState(data) {
    document.getElementById("crawl-status").textContent = data.status;
    if (main.dataset.status === data.status) { return; }
    main.dataset.status = data.status;
    const list = document.querySelector("ul.messagelist");
    if (list) {
      const li = document.createElement("li"); li.className = "info";
      li.textContent = data.name + " is now " + data.status_label.toLowerCase() + ".";
      list.replaceChildren(li);
    }
  }

  function svg(name, attrs, text) {
    const node = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attrs)) { node.setAttribute(key, value); }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  // The chart from the geometry the server computed (crawler/crawl_page.py chart()): the
  // left axis (pages, errors), the right one (documents indexed) and the series' steps.
  function renderChart(ch) {
    const chart = document.getElementById("crawl-chart");
    const xTicks = chart.querySelector(".x-ticks"), yTicks = chart.querySelector(".y-ticks");
    xTicks.replaceChildren(...ch.x_ticks.flatMap((t) => [
      svg("line", { x1: t.at, x2: t.at, y1: ch.bottom, y2: ch.bottom + 4, stroke: "#888" }),
      svg("text", { x: t.at, y: ch.bottom + 15 }, t.label)]));
    yTicks.replaceChildren(...ch.y_ticks.flatMap((t) => [
      svg("line", { x1: ch.left - 4, x2: ch.right, y1: t.at, y2: t.at, stroke: "#eee" }),
      svg("text", { x: ch.left - 6, y: t.at, dy: 4 }, t.label)]));
    chart.querySelector(".y2-ticks").replaceChildren(...ch.y2_ticks.flatMap((t) => [
      svg("line", { x1: ch.right, x2: ch.right + 4, y1: t.at, y2: t.at, stroke: "#888" }),
      svg("text", { x: ch.right + 6, y: t.at, dy: 4 }, t.label)]));
    for (const s of ch.series) {
      const line = chart.querySelector('polyline[data-series="' + s.name + '"]');
      if (line) { line.setAttribute("points", s.points); }
    }
  }

  function renderErrors(data) {
    renderFailures("#crawl-fetch-errors tbody", data.fetch_errors_by_kind, "crawl-errors-summary",
      data.errors_summary);
  }

  function render(data) {
    renderState(data);
    renderButtons(data.actions || []);
    const counters = data.counters;
    for (const [name, value] of Object.entries(counters)) {
      const td = main.querySelector('[data-counter="' + name.replace(/_/g, "-") + '"]');
      if (td) { td.textContent = value; }
    }
    document.getElementById("crawl-rate").textContent = data.pages_per_second;
    document.getElementById("crawl-rate-now").textContent = data.rate_now;
    document.getElementById("crawl-rate-window").textContent = "over " + data.rate_window + " s";
    fillRows(document.querySelector("#crawl-tiers tbody"),
      Object.entries(data.tiers).map(([tier, count]) => ["Tier " + tier, count]), "Nothing queued.");
    const servers = document.querySelector("#crawl-queue-servers tbody");
    servers.replaceChildren();
    for (const qs of data.queue_servers) {
      const tr = document.createElement("tr");
      const beat = qs.seconds_since_heartbeat === null ? "never" : qs.seconds_since_heartbeat + " s ago";
      tr.append(cell(qs.server), cell(qs.state), cell(beat), cell(qs.queued), cell(qs.waiting_robots),
        cell(qs.crawl_delayed), cell(qs.outstanding_schedules), cell(qs.inbox));
      servers.append(tr);
    }
    renderChart(data.chart);
    renderErrors(data);
    fillRows(document.querySelector("#crawl-error-hosts tbody"), data.error_hosts,
      data.reporting ? "No errors reported." : "Not known: no queue server is working on this crawl now.");
    renderRobots(data);
    for (const td of main.querySelectorAll("#crawl-freshness [data-fresh]")) {
      const value = (data.freshness || {})[td.dataset.fresh];
      if (value !== undefined) { td.textContent = value; }
    }
    if (data.archive && document.getElementById("crawl-archive-skipped")) {
      document.getElementById("crawl-archive-listed").textContent = data.archive.listed;
      renderFailures("#crawl-archive-skipped tbody", data.archive.skipped_by_reason,
        "crawl-archive-summary", data.archive.skipped_summary, "None skipped.");
    }
    if (window.yioopyLinkAnalysis) { window.yioopyLinkAnalysis.render(data.link_analysis); }
    const sleep = document.getElementById("crawl-sleep");
    if (sleep) {
      sleep.hidden = !data.asleep;
      document.getElementById("crawl-sleep-window").textContent = data.sleep_window || "";
    }
    const pauses = data.disk_pauses || [];
    const disk = document.getElementById("crawl-disk");
    if (disk) {
      disk.hidden = !pauses.length;
      const list = document.getElementById("crawl-disk-pauses");
      list.replaceChildren(...pauses.map((reason) => {
        const li = document.createElement("li"); li.textContent = reason; return li;
      }));
    }
  }

  window.yioopyLive.poll(url, render, "crawl-refreshed", 2000);
})();
