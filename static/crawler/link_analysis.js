// Keeps the crawl status page's "Link analysis" section current without a reload: its state,
// the progress of a running analysis and the table of the last run that ended, redrawn from
// the status JSON's "link_analysis" (linkgraph.selectors.link_analysis_status_get) that
// crawl_status.js fetches every two seconds. A run that starts and ends between two refreshes
// (the automatic run after a short crawl takes a second) shows as soon as it has ended.
// Load it before crawl_status.js: it defines window.yioopyLinkAnalysis.render.
(function () {
  "use strict";

  function describe(la) {
    const run = la.running;
    if (!run) { return ""; }
    let text = "Running since " + run.started_at + ": " + run.stage + " " + run.done;
    if (run.total) { text += "/" + run.total + " (" + run.percent + "%)"; }
    return text + ".";
  }

  function row(label, value, key) {
    const tr = document.createElement("tr");
    const th = document.createElement("th"); th.scope = "row"; th.textContent = label;
    const td = document.createElement("td");
    td.textContent = value === null || value === undefined ? "–" : value;
    if (key) { td.dataset.la = key; }
    tr.append(th, td);
    return [tr, td];
  }

  // The last run's table, as the template draws it, or the sentence saying there was none.
  function lastRun(last) {
    if (!last) {
      const p = document.createElement("p");
      p.id = "link-analysis-never";
      p.textContent = "Link analysis has not run for this crawl yet.";
      return p;
    }
    const table = document.createElement("table");
    table.id = "link-analysis-last";
    const [outcome, cell] = row("Last run", last.outcome === "ok" ? "OK" : "Failed", "outcome");
    cell.className = "link-analysis-" + last.outcome;
    table.append(outcome);
    if (last.error) { table.append(row("Error", last.error, "error")[0]); }
    table.append(row("Started", last.started_at, "started_at")[0],
      row("Ended", last.finished_at, "finished_at")[0],
      row("Duration", last.seconds + " s", "seconds")[0], row("Pages", last.pages, "pages")[0],
      row("Urls", last.urls, "urls")[0], row("Links", last.edges, "edges")[0]);
    for (const shard of last.shards || []) {
      let text = (shard.documents || 0) + " documents";
      if (shard.location) { text += " from " + shard.location; }
      table.append(row("Queue server " + shard.server, text + "; " + shard.note)[0]);
    }
    return table;
  }

  function render(la) {
    const section = document.getElementById("crawl-link-analysis");
    if (!section || !la) { return; }
    section.dataset.state = la.state;
    document.getElementById("link-analysis-state").textContent = la.state;
    document.getElementById("link-analysis-follow-up").textContent =
      la.follow_up ? " (another run will follow)" : "";
    document.getElementById("link-analysis-progress").textContent = describe(la);
    const box = document.getElementById("link-analysis-last-box");
    const key = JSON.stringify(la.last);
    if (box.dataset.last !== key) {  // redrawn only when it changed (text stays selectable)
      box.dataset.last = key;
      box.replaceChildren(lastRun(la.last));
    }
  }

  window.yioopyLinkAnalysis = { render: render };
}());
