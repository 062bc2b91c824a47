// Reference side of the tokenizer differential test: HF tokenizers (npm `tokenizers`, the Rust
// core behind transformers' fast tokenizers) on the strings of gen_strings.mjs.
//
//   node hf_reference.mjs TOKENIZER_JSON STRINGS_JSONL OUT_JSONL
//
// Writes one line per input line, in order: {"ids": [...], "dec": "..."} where ids =
// encode(text, add_special_tokens=false) and dec = decode(ids, skip_special_tokens=false); when the
// tokenizer has a normalizer and it changes the text, also "rt": normalizer(text), the text that
// decode(encode(text)) must give back (otherwise the text itself). The package is found through
// NODE_PATH (run.sh points it at build/npm-ref/node_modules).

import { createRequire } from 'node:module';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');

const [tokPath, stringsPath, outPath] = process.argv.slice(2);
if (!tokPath || !stringsPath || !outPath) {
  console.error('usage: node hf_reference.mjs TOKENIZER_JSON STRINGS_JSONL OUT_JSONL');
  process.exit(2);
}
const t0 = performance.now();
const tok = Tokenizer.fromFile(tokPath);
const normalizer = tok.getNormalizer();
const texts = readFileSync(stringsPath, 'utf8')
  .split('\n')
  .filter((l) => l.length > 0)
  .map((l) => JSON.parse(l).text);
const t1 = performance.now();

const lines = [];
const kBatch = 512;
for (let b = 0; b < texts.length; b += kBatch) {
  const batch = texts.slice(b, b + kBatch);
  const encs = await tok.encodeBatch(batch, { addSpecialTokens: false });
  const ids = encs.map((e) => e.getIds());
  const decs = await tok.decodeBatch(ids, false);
  for (let i = 0; i < batch.length; ++i) {
    const rec = { ids: ids[i], dec: decs[i] };
    if (normalizer) {
      const n = normalizer.normalizeString(batch[i]);
      if (n !== batch[i]) rec.rt = n;
    }
    lines.push(JSON.stringify(rec));
  }
}
writeFileSync(`${outPath}.part`, lines.join('\n') + '\n');
renameSync(`${outPath}.part`, outPath);  // appears whole: the driver waits for it
const t2 = performance.now();
console.error(
  `hf_reference: ${tokPath}: ${texts.length} strings, load ${((t1 - t0) / 1000).toFixed(2)} s, ` +
    `encode+decode ${((t2 - t1) / 1000).toFixed(2)} s`,
);
