// Tabulates the JSON lines of `tokenizer_bench --figures` and `hf_bench.mjs figures` (several
// repetitions appended to the same files): the median over repetitions of every figure, printed
// as Markdown tables (single thread per corpus part, batch scaling over threads, loaded memory).
//
//   node report.mjs FILE.jsonl...

import { readFileSync } from 'node:fs';

const rows = process.argv
  .slice(2)
  .flatMap((f) => readFileSync(f, 'utf8').split('\n'))
  .filter((l) => l.startsWith('{'))
  .map((l) => JSON.parse(l));

const median = (xs) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const pick = (impl, kind, part, threads) =>
  rows.filter(
    (r) =>
      r.impl === impl &&
      r.kind === kind &&
      (part === undefined || r.part === part) &&
      (threads === undefined || r.threads === threads),
  );
const med = (rs, key) => median(rs.map((r) => r[key]));
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');
const mtok = (x) => (Number.isFinite(x) ? (x / 1e6).toFixed(3) : 'n/a');
const mib = (x) => (Number.isFinite(x) ? (x / 1048576).toFixed(1) : 'n/a');
const reps = pick('llmbench', 'single', 'mixed').length;

console.log(`Median of ${reps} repetition(s); rates per wall-clock second unless marked CPU.\n`);
console.log('Single thread (llmbench: encode per document, one Scratch; HF: encodeBatch with ' +
  'RAYON_NUM_THREADS=1):\n');
console.log('| part | KB | bytes/token | llmbench MB/s | llmbench Mtok/s | HF MB/s | HF Mtok/s | ' +
  'ratio | ratio per CPU s | HF cpu util | same tokens |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
for (const part of ['english', 'code', 'chinese', 'multilingual', 'mixed']) {
  const l = pick('llmbench', 'single', part);
  const h = pick('hf', 'batch', part, 1);
  if (l.length === 0) continue;
  const lb = med(l, 'mb_s');
  const hb = med(h, 'mb_s');
  const same = h.length === 0 ? 'n/a' : l[0].tokens === h[0].tokens ? 'yes' : `NO (${l[0].tokens} vs ${h[0].tokens})`;
  console.log(
    `| ${part} | ${(l[0].bytes / 1000).toFixed(0)} | ${f2(l[0].bytes / l[0].tokens)} | ${f2(lb)} | ` +
      `${mtok(med(l, 'tok_s'))} | ${f2(hb)} | ${mtok(med(h, 'tok_s'))} | ${f2(lb / hb)}x | ` +
      `${f2(med(l, 'cpu_mb_s') / med(h, 'cpu_mb_s'))}x | ${f2(med(h, 'cpu_util'))} | ${same} |`,
  );
}
const enc = pick('hf', 'encode', 'mixed');
if (enc.length > 0) {
  console.log(
    `\nHF one document per \`await encode()\` (mixed): ${f2(med(enc, 'mb_s'))} MB/s, ` +
      `${mtok(med(enc, 'tok_s'))} Mtok/s`,
  );
}
console.log('\nBatch, mixed part (llmbench encode_batch(texts, options, N); HF encodeBatch with ' +
  'RAYON_NUM_THREADS=N):\n');
console.log('| threads | llmbench MB/s | llmbench Mtok/s | llmbench cpu util | HF MB/s | HF Mtok/s | ' +
  'HF cpu util | ratio |');
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
const threads = [...new Set(rows.filter((r) => r.kind === 'batch').map((r) => r.threads))].sort(
  (a, b) => a - b,
);
for (const n of threads) {
  const l = pick('llmbench', 'batch', 'mixed', n);
  const h = pick('hf', 'batch', 'mixed', n);
  const util = (rs) => median(rs.map((r) => r.cpu_s / r.wall_s));
  console.log(
    `| ${n} | ${f2(med(l, 'mb_s'))} | ${mtok(med(l, 'tok_s'))} | ${f2(util(l))} | ` +
      `${f2(med(h, 'mb_s'))} | ${mtok(med(h, 'tok_s'))} | ${f2(util(h))} | ` +
      `${f2(med(l, 'mb_s') / med(h, 'mb_s'))}x |`,
  );
}
const lm = pick('llmbench', 'memory');
const hm = pick('hf', 'memory', undefined, 1);
console.log('\nLoaded tokenizer (DeepSeek-V3):\n');
console.log('| | memory_bytes() MiB | RSS growth of loading MiB | load s |');
console.log('|---|---:|---:|---:|');
console.log(
  `| llmbench | ${mib(med(lm, 'memory_bytes'))} | ${mib(med(lm, 'rss_delta_bytes'))} | ` +
    `${f2(med(lm, 'load_s'))} |`,
);
console.log(`| HF (node process) | n/a | ${mib(med(hm, 'rss_delta_bytes'))} | ${f2(med(hm, 'load_s'))} |`);
