// llmbench HTML report, part 2 of 5: the top of the page, what was run and what was found: a
// configuration card per run (or per sweep) with its verdict badges, the answers as headlines,
// and the summary table.
(function (LB) {
  "use strict";
  const el = LB.el;

  // A card: the run's name with its colour, its badges, then its configuration lines. `differs`
  // names the knobs in which it differs from the others ("max_num_seqs 256").
  LB.configCard = function (parent, spec) {
    const card = el("div", { class: "config-card", "data-run": spec.name });
    const head = el("div", { class: "card-head" });
    if (spec.color) head.appendChild(el("span", { class: "swatch", style: "background:" + spec.color }));
    head.appendChild(el("strong", { class: "run-name" }, spec.name));
    if (spec.differs) head.appendChild(el("span", { class: "differs" }, spec.differs));
    const badges = el("span", { class: "badges" });
    for (const b of spec.badges || []) badges.appendChild(LB.badge(b));
    head.appendChild(badges);
    card.appendChild(head);
    const dl = el("dl", { class: "config" });
    for (const line of spec.lines || []) {
      if (spec.skip && spec.skip.includes(line.key)) continue;
      dl.appendChild(el("dt", {}, line.label));
      dl.appendChild(el("dd", { "data-key": line.key }, line.text));
    }
    card.appendChild(dl);
    parent.appendChild(card);
    return card;
  };

  // The answers, one card each: title, text, and what it rests on as a tooltip.
  LB.headlines = function (parent, list, id) {
    if (!list || list.length === 0) return null;
    const box = el("div", { class: "headlines", id: id || "" });
    for (const h of list) {
      const card = el("div", { class: "headline " + h.tone, "data-headline": h.key,
                               title: h.detail || "" });
      card.appendChild(el("div", { class: "headline-title" }, h.title));
      if (h.parts) {
        const p = el("div", { class: "headline-text" });
        if (h.text) p.appendChild(document.createTextNode(h.text + " "));
        for (const part of h.parts) p.appendChild(el("span", { class: "delta " + part.tone }, part.text));
        card.appendChild(p);
      } else {
        card.appendChild(el("div", { class: "headline-text" }, h.text));
      }
      box.appendChild(card);
    }
    parent.appendChild(box);
    return box;
  };

  // The summary of the runs given (not sweep points): one card each, the comparison headlines,
  // then the table.
  LB.runsOverview = function (main, runs, data) {
    if (runs.length === 0) return;
    const s = el("section", { id: "overview" });
    const cards = el("div", { class: "cards n" + Math.min(runs.length, 3) });
    const n = runs.length;
    const cmp = data.comparison;
    // Lines shared by every run are shown once, on the first card, when there are several.
    const shared = (key) => n > 1 && runs.every((r) => {
      const a = r.config.lines.find((l) => l.key === key);
      const b = runs[0].config.lines.find((l) => l.key === key);
      return a && b && a.text === b.text;
    });
    runs.forEach((r, i) => {
      const skip = n > 1 && i > 0 ? r.config.lines.map((l) => l.key).filter(shared) : [];
      LB.configCard(cards, { name: r.name, color: r.color,
                             differs: r.differs, badges: r.verdict.badges, lines: r.config.lines,
                             skip: skip });
    });
    s.appendChild(cards);
    if (n === 1) {
      LB.headlines(s, runs[0].verdict.headlines, "answers");
    } else {
      const list = [];
      if (cmp && cmp.text) list.push({ key: "differs", title: "What differs", text: cmp.text,
                                        tone: "info", detail: "" });
      for (const c of (cmp && cmp.changes) || []) {
        list.push({ key: "change", title: runs[c.run].name + " against " + runs[c.against].name,
                    text: "", parts: c.parts, tone: "info",
                    detail: "point estimates; llmbench compare gives intervals and verdicts" });
      }
      for (const r of runs) {
        const bad = r.verdict.headlines.filter((h) => h.tone === "bad" || h.tone === "warn");
        for (const h of bad) list.push(Object.assign({}, h, { title: r.name + ": " + h.title }));
      }
      LB.headlines(s, list, "answers");
    }
    main.appendChild(s);
  };

  // The table of every run: the runs given, then each sweep's points by configuration and load.
  LB.summaryTable = function (main, rows, title) {
    const s = el("section");
    s.appendChild(el("h2", {}, title || "Summary"));
    const cols = [["completed", "done", 0], ["failed", "failed", 0],
                  ["duration", "duration s", 1], ["request_throughput", "req/s", 2],
                  ["output_throughput", "out tok/s", 0], ["median_ttft_ms", "TTFT p50", 1],
                  ["p99_ttft_ms", "TTFT p99", 1], ["median_tpot_ms", "TPOT p50", 2],
                  ["p99_tpot_ms", "TPOT p99", 2], ["p99_itl_ms", "ITL p99", 2],
                  ["p99_e2el_ms", "E2EL p99", 0]];
    const table = el("table", { class: "summary", "data-rows": String(rows.length) });
    const head = el("tr");
    for (const h of ["run", "verdict"]) head.appendChild(el("th", {}, h));
    for (const c of cols) head.appendChild(el("th", { title: c[0] }, c[1]));
    head.appendChild(el("th", {}, "notes"));
    table.appendChild(head);
    for (const row of rows) {
      const r = row.run;
      const tr = el("tr", row.onclick ? { class: "clickable" } : {});
      const name = el("td", { class: "run" });
      name.appendChild(el("span", { class: "swatch", style: "background:" + row.color }));
      name.appendChild(document.createTextNode(row.name));
      tr.appendChild(name);
      const cell = el("td", { class: "verdict" });
      const badges = el("span", { class: "badges" });
      for (const b of row.badges || []) badges.appendChild(LB.badge(b));
      cell.appendChild(badges);
      tr.appendChild(cell);
      for (const c of cols) {
        tr.appendChild(el("td", { class: "num" }, r ? LB.fmt(r.summary[c[0]], c[2]) : "n/a"));
      }
      tr.appendChild(el("td", { class: "notes" }, row.notes || ""));
      if (row.onclick) tr.addEventListener("click", row.onclick);
      table.appendChild(tr);
    }
    s.appendChild(table);
    s.appendChild(el("p", { class: "note" },
                     "Latencies in ms (docs/metrics.md defines each); percentiles exact over " +
                     "all samples, as in the results JSON."));
    main.appendChild(s);
    return table;
  };
})(window.LB = window.LB || {});
