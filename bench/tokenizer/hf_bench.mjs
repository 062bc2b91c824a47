// HF tokenizers (npm `tokenizers`, the Rust core behind transformers' fast tokenizers) on the
// same documents as tokenizer_bench, for side-by-side speed figures and an exactness check.
//
//   node --expose-gc hf_bench.mjs figures TOKENIZER_JSON CORPUS_DIR SECONDS THREADS PARTS
//     CORPUS_DIR holds <part>.jsonl from `tokenizer_bench --write-corpus=DIR`; PARTS is a comma
//     list (e.g. english,code,chinese,multilingual,mixed). Prints one JSON object per line:
//     {"kind":"memory"}: RSS growth of the node process over `Tokenizer.fromFile` (after a GC
//       when --expose-gc is given);
//     {"kind":"batch"} per part: `encodeBatch(all documents of the part)` (the npm package's
//       batch API; one call, HF spreads it over its rayon pool), one warm-up call, then repeated
//       for at least SECONDS of wall-clock time. THREADS only labels the row: the pool size is set
//       by the environment the caller gives (RAYON_NUM_THREADS; see run.sh). "cpu_util" (process
//       CPU seconds / wall seconds) shows how many cores really worked;
//     {"kind":"encode"} for the mixed part when it is listed: `await encode(doc)` one document at a
//       time (one encode in flight, so one core works).
//   node hf_bench.mjs ids TOKENIZER_JSON INPUT_JSONL > OUT_JSONL
//     writes {"ids": [...]} per input line {"text": ...} (add_special_tokens=false), to compare
//     with `llmbench tokenize --jsonl`.
//
// The package is not a project dependency: install it outside the repo (bench/tokenizer/run.sh
// uses NODE_PATH, e.g. npm install --prefix /work/ext/npm tokenizers@0.23.2).

import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');

const [mode, tokPath, corpusPath, secondsArg, threadsArg, partsArg] = process.argv.slice(2);
if (!mode || !tokPath || !corpusPath) {
  console.error('usage: node hf_bench.mjs figures|ids TOKENIZER_JSON CORPUS [SECONDS THREADS PARTS]');
  process.exit(2);
}
const readDocs = (path) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim().length > 0)
    .map((l) => JSON.parse(l).text);
const gc = globalThis.gc ?? (() => {});
const opts = { addSpecialTokens: false };

if (mode === 'ids') {
  const tok = Tokenizer.fromFile(tokPath);
  for (const d of readDocs(corpusPath)) {
    const enc = await tok.encode(d, null, opts);
    process.stdout.write(JSON.stringify({ ids: enc.getIds() }) + '\n');
  }
} else {
  const seconds = Number(secondsArg ?? 1);
  const threads = Number(threadsArg ?? 1);
  const parts = (partsArg ?? 'mixed').split(',');
  const docsOf = Object.fromEntries(parts.map((p) => [p, readDocs(`${corpusPath}/${p}.jsonl`)]));
  gc();
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const tok = Tokenizer.fromFile(tokPath);
  const loadS = (performance.now() - t0) / 1000;
  gc();
  const rss1 = process.memoryUsage().rss;
  console.log(
    JSON.stringify({ impl: 'hf', kind: 'memory', threads, rss_delta_bytes: rss1 - rss0, load_s: loadS }),
  );
  // Times `pass` (async, returns the tokens of one pass): one warm-up, then >= `seconds`.
  const timed = async (kind, part, docs, pass) => {
    const bytes = docs.reduce((n, d) => n + Buffer.byteLength(d, 'utf8'), 0);
    const tokens = await pass();
    let passes = 0;
    const cpu0 = process.cpuUsage();
    const start = performance.now();
    let wallS = 0;
    do {
      if ((await pass()) !== tokens) throw new Error('token count changed between passes');
      ++passes;
      wallS = (performance.now() - start) / 1000;
    } while (wallS < seconds);
    const cpu = process.cpuUsage(cpu0);
    const cpuS = (cpu.user + cpu.system) / 1e6;
    console.log(
      JSON.stringify({
        impl: 'hf', kind, part, threads, docs: docs.length, bytes, tokens, passes,
        wall_s: wallS, cpu_s: cpuS,
        mb_s: (bytes * passes) / wallS / 1e6,
        tok_s: (tokens * passes) / wallS,
        cpu_mb_s: (bytes * passes) / cpuS / 1e6,
        cpu_util: cpuS / wallS,
      }),
    );
  };
  for (const part of parts) {
    const docs = docsOf[part];
    await timed('batch', part, docs, async () =>
      (await tok.encodeBatch(docs, opts)).reduce((n, e) => n + e.getIds().length, 0),
    );
  }
  if (docsOf.mixed && threads === 1) {
    const docs = docsOf.mixed;
    await timed('encode', 'mixed', docs, async () => {
      let n = 0;
      for (const d of docs) n += (await tok.encode(d, null, opts)).getIds().length;
      return n;
    });
  }
}
