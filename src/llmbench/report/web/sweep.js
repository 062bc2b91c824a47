// llmbench HTML report, part 4 of 5: the sweep view. Each metric against the load with its
// percentile band, one line per configuration (the values of the axes that are not a load
// axis), every point marked valid (filled) or invalid (hollow) and, with an SLO, a red cross
// where it misses it; the Pareto frontier of output per GPU against output per user with the
// configurations as series; the points sorted by configuration and load; and a point selector
// that shows one point's own charts below instead of overlaying every point.
(function (LB) {
  "use strict";
  const el = LB.el;
  const finite = (v) => v !== null && v !== undefined && Number.isFinite(v);

  LB.sweeps = function (main, data) {
    (data.sweeps || []).forEach((s, k) => sweep(main, data, s, k === 0 ? "" : "s" + k + "-"));
  };

  // "max-num-seqs=64 gpu=h100" (a knee's group) → "max_num_seqs 64, gpu h100" (a config label).
  const groupLabel = (g) => (g || "").split(" ").filter((t) => t).map((t) => {
    const [k, v] = t.split("=");
    return k.replace(/-/g, "_") + " " + v;
  }).join(", ");

  function sweep(main, data, s, prefix) {
    const section = el("section", { class: "sweep", id: prefix + "sweep" });
    section.appendChild(el("h2", {}, "Sweep " + s.name));
    main.appendChild(section);
    const nc = s.configs.length;
    const colorOf = (c) => LB.color(c, nc);
    const label = (c) => s.configs[c] || "all points";
    const state = { selected: null, charts: [] };

    // ---- what was run and what was found ----
    const top = el("div", { class: "cards n1" });
    const badges = [];
    LB.configCard(top, { name: s.name + " (" + s.mode + ")", lines: s.config_lines,
                         badges: badges });
    section.appendChild(top);
    if (nc > 1) {
      const chips = el("p", { class: "configs" });
      chips.appendChild(el("span", { class: "note" }, nc + " configurations: "));
      s.configs.forEach((c, i) => {
        const chip = el("span", { class: "chip" });
        chip.appendChild(el("span", { class: "swatch", style: "background:" + colorOf(i) }));
        chip.appendChild(document.createTextNode(c));
        chips.appendChild(chip);
      });
      section.appendChild(chips);
    }
    LB.headlines(section, s.headlines, prefix + "sweep-answers");

    // ---- the charts ----
    const grid = el("div", { class: "grid" });
    section.appendChild(grid);
    const ran = s.points.filter((p) => p.status === "ok" && finite(p.x));
    const byConfig = [...Array(Math.max(nc, 1)).keys()].map(
        (c) => ran.filter((p) => p.config === c).sort((a, b) => a.x - b.x));
    const xs = ran.map((p) => p.x);
    const xLog = LB.wantsLog(xs);
    const xLabel = s.x.label;
    const slo = (s.slo && s.slo.constraints) || [];
    const knees = s.knees || [];

    // Throughput (and goodput) against the load, with the knees.
    const tput = [];
    byConfig.forEach((pts, c) => {
      if (pts.length === 0) return;
      tput.push({ label: label(c), x: pts.map((p) => p.x),
                  y: pts.map((p) => p.metrics.output_throughput), color: colorOf(c), noPoints: true });
    });
    const kneeMarks = s.x.key === s.load_axis ? knees.filter(
        (k) => k.throughput_knee && k.throughput_knee.found).map((k) => ({
          x: k.throughput_knee.load, y: k.throughput_knee.output_throughput,
          color: "#d62728", label: "knee" + (nc > 1 ? " " + groupLabel(k.group) : "") + " @ " +
                 LB.fmt(k.throughput_knee.load) })) : [];
    chart("sweep-throughput", "Output throughput against " + xLabel, tput, "output tok/s",
          (p) => p.metrics.output_throughput, LB.markers(kneeMarks, sloGuides("output_throughput")),
          false, [], { yInclude: sloBounds("output_throughput") });

    // Each latency: p50 solid, p99 dashed, the band between them.
    for (const [key, name] of [["ttft", "TTFT"], ["tpot", "TPOT"], ["itl", "ITL"], ["e2el", "E2EL"]]) {
      const series = [];
      const bands = [];
      byConfig.forEach((pts, c) => {
        if (pts.length === 0) return;
        const x = pts.map((p) => p.x);
        series.push({ label: label(c) + " p50", x: x, y: pts.map((p) => p.metrics["median_" + key + "_ms"]),
                      color: colorOf(c), noPoints: true });
        series.push({ label: label(c) + " p99", x: x, y: pts.map((p) => p.metrics["p99_" + key + "_ms"]),
                      color: colorOf(c), dash: [5, 4], width: 1.2, noPoints: true });
        bands.push({ upper: series.length - 1, lower: series.length - 2,
                     fill: LB.alpha(colorOf(c), 0.12) });
      });
      chart("sweep-" + key, name + " against " + xLabel + " (p50, band to p99)", series, "ms",
            (p) => p.metrics["median_" + key + "_ms"], sloGuides("_" + key + "_ms"), true, bands,
            { yInclude: sloBounds("_" + key + "_ms") });
    }

    // p99 TTFT against throughput: where latency takes off.
    const lt = byConfig.map((pts, c) => {
      const sorted = pts.slice().sort((a, b) => a.metrics.output_throughput - b.metrics.output_throughput);
      return { label: label(c), x: sorted.map((p) => p.metrics.output_throughput),
               y: sorted.map((p) => p.metrics.p99_ttft_ms), color: colorOf(c), noPoints: true };
    }).filter((x) => x.x.length > 0);
    const latencyKnees = knees.filter((k) => k.latency_knee && k.latency_knee.found).map((k) => ({
      x: k.latency_knee.output_throughput, y: k.latency_knee.p99_ttft_ms, color: "#d62728",
      label: "latency knee" + (nc > 1 ? " " + groupLabel(k.group) : "") }));
    const ltGuides = slo.filter((c) => c.metric === "p99_ttft_ms").map((c) => (
      { y: c.bound, color: "#9467bd", label: "SLO " + c.text })).concat(
        slo.filter((c) => c.metric === "output_throughput").map((c) => (
          { x: c.bound, color: "#9467bd", label: "SLO " + c.text })));
    chart("sweep-latency-throughput", "p99 TTFT against output throughput", lt, "p99 TTFT (ms)",
          (p) => p.metrics.p99_ttft_ms, LB.markers(latencyKnees, LB.guides(ltGuides)), true, [],
          { xOf: (p) => p.metrics.output_throughput, xLabel: "output tok/s", xLog: false,
            yInclude: sloBounds("p99_ttft_ms") });

    // The Pareto chart: configurations as series, the frontier dashed black.
    const par = byConfig.map((pts, c) => {
      const sorted = pts.filter((p) => finite(p.interactivity)).sort((a, b) => a.interactivity - b.interactivity);
      return { label: label(c), x: sorted.map((p) => p.interactivity), y: sorted.map((p) => p.per_gpu),
               color: colorOf(c), noPoints: true, width: 1 };
    }).filter((x) => x.x.length > 0);
    const front = s.points.filter((p) => s.pareto.frontier.includes(p.index) && finite(p.interactivity))
        .sort((a, b) => a.interactivity - b.interactivity);
    if (front.length > 1) {
      par.unshift({ label: "Pareto frontier", x: front.map((p) => p.interactivity),
                    y: front.map((p) => p.per_gpu), color: "#000000", dash: [8, 5], width: 2.5,
                    noPoints: true });
    }
    chart("sweep-pareto", "Pareto: " + s.pareto.y + " against output tok/s per user", par,
          s.pareto.y, (p) => p.per_gpu, null, false, [],
          { xOf: (p) => p.interactivity, xLabel: s.pareto.x, xLog: false, frontier: front.length > 1 });

    // ---- the points: table, selector, detail ----
    const sorted = s.points.slice().sort((a, b) => (a.config - b.config) ||
                                         ((finite(a.x) ? a.x : 1e300) - (finite(b.x) ? b.x : 1e300)));
    const rows = sorted.map((p) => ({
      name: p.name, run: p.run !== null ? data.runs[p.run] : null, color: colorOf(p.config),
      badges: (p.status === "ok" ? [] : [{ text: p.status, tone: "bad", detail: p.error }])
        .concat(p.badges).concat(p.slo === null ? [] : [
          { text: p.slo ? "meets SLO" : "misses SLO", tone: p.slo ? "good" : "bad",
            detail: (p.slo_broken || []).join("; ") }]),
      notes: p.run !== null ? (data.runs[p.run].notes || []).join("; ") : p.error,
      onclick: p.run !== null ? () => select(p) : null,
    }));
    LB.summaryTable(section, rows, "Points of " + s.name + " (by configuration and load; " +
                    "click one to see it below)");
    const pick = el("div", { class: "point-pick" });
    pick.appendChild(el("label", { for: prefix + "point-select" }, "Point: "));
    const selector = el("select", { id: prefix + "point-select", class: "point-select" });
    for (const p of sorted) {
      if (p.run !== null) selector.appendChild(el("option", { value: String(p.index) }, p.name));
    }
    pick.appendChild(selector);
    section.appendChild(pick);
    const panel = el("div", { class: "point-detail", id: prefix + "point-detail" });
    section.appendChild(panel);
    selector.addEventListener("change", () => {
      const p = s.points.find((q) => String(q.index) === selector.value);
      if (p) select(p);
    });

    function select(p) {
      state.selected = p.index;
      selector.value = String(p.index);
      for (const u of state.charts) u.redraw(false);
      LB.dropCharts(panel);
      const run = data.runs[p.run];
      const cards = el("div", { class: "cards n1" });
      LB.configCard(cards, { name: p.name, color: colorOf(p.config), badges: rows.find(
          (r) => r.name === p.name).badges, lines: run.config.lines.filter(
          (l) => ["load", "dataset", "engine", "date"].includes(l.key)) });
      panel.appendChild(cards);
      LB.headlines(panel, run.verdict.headlines, prefix + "point-answers");
      const before = LB.charts.length;
      LB.detail(panel, { runs: [run], colors: [colorOf(p.config)], prefix: prefix + "point-",
                         data: data });
      const added = LB.charts.slice(before);
      if (LB.ready) setTimeout(() => LB.markDrawn(added), 50);
    }

    // The point shown first: the SLO answer, else the first knee, else the most throughput.
    let first = null;
    if (s.slo && finite(s.slo.answer)) {
      const tag = s.slo.axis + "=" + s.slo.answer + " ";
      first = ran.find((p) => p.run !== null && (p.label + " ").includes(tag));
    }
    const knee = knees.find((k) => k.throughput_knee && k.throughput_knee.found);
    if (!first && knee && s.x.key === s.load_axis) {
      first = ran.find((p) => p.run !== null && p.x === knee.throughput_knee.load &&
                       label(p.config) === (groupLabel(knee.group) || "all points"));
    }
    if (!first) {
      first = ran.filter((p) => p.run !== null).sort(
          (a, b) => b.metrics.output_throughput - a.metrics.output_throughput)[0];
    }
    if (first) select(first);
    else LB.empty(LB.chartBox(panel, prefix + "point-none", "Point"), "no point ran");

    // ---- one sweep chart ----
    // series: the lines; yOf: a point's y for its marker; draw: guides and knees; yLogOk: a log
    // y axis when the range asks; opt: another x (xOf, xLabel, xLog).
    function chart(id, title, series, yLabel, yOf, draw, yLogOk, bands, opt) {
      opt = opt || {};
      const box = LB.chartBox(grid, prefix + id, title);
      legend(box, series.some((x) => x.label === "Pareto frontier"), bands && bands.length > 0);
      const xOf = opt.xOf || ((p) => p.x);
      const ys = series.flatMap((x) => x.y);
      // An SLO bound off the data's range widens the y axis so its line shows (an invisible
      // series, not drawn and not in any legend).
      for (const b of (opt.yInclude || [])) {
        const xsAll = series.flatMap((x) => x.x).filter(finite);
        if (xsAll.length > 0) {
          series.push({ label: "", x: [Math.min(...xsAll), Math.max(...xsAll)], y: [b, b],
                        color: "rgba(0,0,0,0)", noPoints: true });
        }
      }
      const u = LB.lineChart(box, {
        series: series, bands: bands, xLabel: opt.xLabel || xLabel, yLabel: yLabel,
        xLog: opt.xLog !== undefined ? opt.xLog : xLog, yLog: yLogOk && LB.wantsLog(ys),
        xPad: true, legend: "off", height: 280,
        draw: (u) => { if (draw) draw(u); marks(u, xOf, yOf); },
        emptyReason: "no point ran" });
      if (!u) return;
      state.charts.push(u);
      u.over.addEventListener("click", (e) => {
        let best = null;
        let bestD = 14;
        for (const p of ran) {
          const x = u.valToPos(xOf(p), "x");
          const y = u.valToPos(yOf(p), "y");
          const d = Math.hypot(x - e.offsetX, y - e.offsetY);
          if (finite(d) && d < bestD) { best = p; bestD = d; }
        }
        if (best && best.run !== null) select(best);
      });
    }
    // One entry per configuration (never per point), and the marker key.
    function legend(box, frontier, band) {
      const lg = el("div", { class: "sweep-legend" });
      if (nc > 1 || s.configs[0]) {
        s.configs.forEach((c, i) => {
          const item = el("span", { class: "chip" });
          item.appendChild(el("span", { class: "swatch", style: "background:" + colorOf(i) }));
          item.appendChild(document.createTextNode(c || "all points"));
          lg.appendChild(item);
        });
      }
      let key = "● valid  ○ invalid";
      if (slo.length > 0) key += "  ✕ misses the SLO";
      if (band) key += "  — p50  - - p99";
      if (frontier) key += "  - - Pareto frontier";
      lg.appendChild(el("span", { class: "marker-key" }, key));
      box.appendChild(lg);
    }
    // The points: filled when valid, hollow when invalid, a red cross when the SLO is missed,
    // a black ring around the selected one.
    function marks(u, xOf, yOf) {
      const ctx = u.ctx;
      const r = 4.5 * devicePixelRatio;
      ctx.save();
      for (const p of ran) {
        const xv = xOf(p);
        const yv = yOf(p);
        if (!finite(xv) || !finite(yv)) continue;
        const x = u.valToPos(xv, "x", true);
        const y = u.valToPos(yv, "y", true);
        ctx.lineWidth = 1.5 * devicePixelRatio;
        ctx.strokeStyle = colorOf(p.config);
        ctx.fillStyle = p.valid === false ? "#ffffff" : colorOf(p.config);
        ctx.beginPath();
        ctx.arc(x, y, r, 0, 2 * Math.PI);
        ctx.fill();
        ctx.stroke();
        if (p.slo === false) {
          ctx.strokeStyle = "#d62728";
          ctx.lineWidth = 2 * devicePixelRatio;
          ctx.beginPath();
          ctx.moveTo(x - r * 1.3, y - r * 1.3);
          ctx.lineTo(x + r * 1.3, y + r * 1.3);
          ctx.moveTo(x + r * 1.3, y - r * 1.3);
          ctx.lineTo(x - r * 1.3, y + r * 1.3);
          ctx.stroke();
        }
        if (p.index === state.selected) {
          ctx.strokeStyle = "#000000";
          ctx.lineWidth = 2 * devicePixelRatio;
          ctx.beginPath();
          ctx.arc(x, y, r * 2, 0, 2 * Math.PI);
          ctx.stroke();
        }
      }
      ctx.restore();
    }
    function sloBounds(part) {
      return slo.filter((c) => c.metric.includes(part)).map((c) => c.bound);
    }
    // SLO bounds on the chart of the metric they bound (a metric name containing `part`).
    function sloGuides(part) {
      return LB.guides(slo.filter((c) => c.metric.includes(part)).map((c) => (
        { y: c.bound, color: "#9467bd", label: "SLO " + c.text })));
    }
  }
})(window.LB = window.LB || {});
