// llmbench HTML report, part 5 of 5: reads the data embedded by src/llmbench/report/html.cpp
// (the JSON in #llmbench-data, its fields in docs/report.md "Embedded data") and lays the page
// out top down: what was run and what was found (configuration cards, verdict badges, answers),
// then the sweeps, then the charts of the runs given. <body> gets data-report-status="ready"
// and data-errors when every chart is drawn: the browser test reads them.
(function (LB) {
  "use strict";
  const el = LB.el;
  const data = JSON.parse(document.getElementById("llmbench-data").textContent);
  const main = document.getElementById("report");
  const runs = data.runs || [];
  runs.forEach((r, i) => { r.index = i; });
  const plain = runs.filter((r) => !r.group);
  plain.forEach((r, i) => { r.color = LB.color(i, plain.length); });

  // Multi-turn runs: TTFT by turn.
  function byTurn() {
    const withTurns = plain.filter((r) => Array.isArray(r.by_turn) && r.by_turn.length > 0);
    if (withTurns.length === 0) return;
    const s = el("section");
    s.appendChild(el("h2", {}, "TTFT by turn"));
    const table = el("table", { class: "summary by-turn" });
    const head = el("tr");
    for (const h of ["run", "turn", "done", "failed", "TTFT mean", "TTFT median", "TTFT p99",
                     "input tok", "cached tok"]) head.appendChild(el("th", {}, h));
    table.appendChild(head);
    for (const r of withTurns) {
      for (const t of r.by_turn) {
        const tr = el("tr");
        tr.appendChild(el("td", { class: "run" }, r.name));
        for (const [v, d] of [[t.turn, 0], [t.count, 0], [t.failed, 0], [t.mean_ttft_ms, 2],
                              [t.median_ttft_ms, 2], [t.p99_ttft_ms, 2],
                              [t.mean_input_tokens, 0], [t.mean_cached_tokens, 0]]) {
          tr.appendChild(el("td", { class: "num" }, LB.fmt(v, d)));
        }
        table.appendChild(tr);
      }
    }
    s.appendChild(table);
    for (const r of withTurns) {
      if (r.turn_finding && r.turn_finding.text) {
        s.appendChild(el("p", { class: r.turn_finding.said ? "finding" : "note" },
                         r.name + ": " + r.turn_finding.text));
      }
    }
    s.appendChild(el("p", { class: "note" },
                     "Turn 2 repeats turn 1 and its answer: a server's prefix cache shows as a " +
                     "lower TTFT at a longer input (docs/workloads.md, \"Conversations\")."));
    main.appendChild(s);
  }

  function finish() {
    LB.markDrawn(LB.charts);
    LB.ready = true;
    document.body.dataset.charts = String(document.querySelectorAll(".chart").length);
    document.body.dataset.errors = String(LB.errors.length);
    if (LB.errors.length) document.body.dataset.errorText = LB.errors.join(" | ");
    document.body.dataset.reportStatus = "ready";
  }

  try {
    const g = data.generator || {};
    const sweeps = (data.sweeps || []).length;
    document.getElementById("subtitle").textContent =
        (plain.length > 0 ? plain.length + (plain.length === 1 ? " run" : " runs") : "") +
        (plain.length > 0 && sweeps > 0 ? ", " : "") +
        (sweeps > 0 ? sweeps + (sweeps === 1 ? " sweep" : " sweeps") : "") +
        " · report by llmbench " + (g.version || "") + " (" + String(g.git_sha || "").slice(0, 12) + ")";
    LB.runsOverview(main, plain, data);
    if (plain.length > 0) {
      LB.summaryTable(main, plain.map((r) => ({ name: r.name, run: r, color: r.color,
                                                badges: r.verdict.badges,
                                                notes: (r.notes || []).join("; ") })));
    }
    LB.sweeps(main, data);
    if (plain.length > 0) {
      byTurn();
      LB.detail(main, { runs: plain, colors: plain.map((r) => r.color), prefix: "", data: data });
    }
  } catch (e) {
    LB.errors.push(String(e && e.stack ? e.stack : e));
    console.error(e);
  }
  // uPlot commits its first draw in a microtask; a timer runs after it.
  setTimeout(finish, 50);
})(window.LB = window.LB || {});
