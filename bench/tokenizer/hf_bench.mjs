// HF tokenizers (npm `tokenizers`, the Rust core behind transformers' fast tokenizers) on the
// same documents as tokenizer_bench, for a side-by-side speed figure and an exactness check.
//
//   node hf_bench.mjs speed TOKENIZER_JSON CORPUS_JSONL [SECONDS]
//     encodes every document one after another (await each: one encode in flight, so one core
//     works), repeats for about SECONDS, prints MB/s and tokens/s of input bytes.
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

const [mode, tokPath, corpusPath, secondsArg] = process.argv.slice(2);
if (!mode || !tokPath || !corpusPath) {
  console.error('usage: node hf_bench.mjs speed|ids TOKENIZER_JSON JSONL [SECONDS]');
  process.exit(2);
}
const tok = Tokenizer.fromFile(tokPath);
const docs = readFileSync(corpusPath, 'utf8')
  .split('\n')
  .filter((l) => l.trim().length > 0)
  .map((l) => JSON.parse(l).text);

if (mode === 'ids') {
  for (const d of docs) {
    const enc = await tok.encode(d, null, { addSpecialTokens: false });
    process.stdout.write(JSON.stringify({ ids: enc.getIds() }) + '\n');
  }
} else {
  const seconds = Number(secondsArg ?? 5);
  const bytesPerPass = docs.reduce((n, d) => n + Buffer.byteLength(d, 'utf8'), 0);
  // Warm-up pass (fills HF's word cache, as tokenizer_bench's persistent Scratch does).
  let tokensPerPass = 0;
  for (const d of docs) {
    tokensPerPass += (await tok.encode(d, null, { addSpecialTokens: false })).getIds().length;
  }
  let passes = 0;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    for (const d of docs) {
      await tok.encode(d, null, { addSpecialTokens: false });
    }
    ++passes;
  }
  const s = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const mb = (bytesPerPass * passes) / s / 1e6;
  const tps = (tokensPerPass * passes) / s;
  console.log(
    `hf-tokenizers(npm) encode: ${docs.length} docs, ${bytesPerPass} bytes/pass, ` +
      `${passes} passes in ${s.toFixed(2)} s: ${mb.toFixed(2)} MB/s, ` +
      `${(tps / 1e6).toFixed(3)} M tokens/s wall clock; per CPU second (all threads): ` +
      `${((bytesPerPass * passes) / cpuS / 1e6).toFixed(2)} MB/s, ` +
      `${((tokensPerPass * passes) / cpuS / 1e6).toFixed(3)} M tokens/s`,
  );
}
