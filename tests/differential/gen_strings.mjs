// Deterministic test strings for the tokenizer differential test (tests/differential/README.md).
//
//   node gen_strings.mjs DATA_DIR OUT_JSONL [ADDED_TOKENS_JSON]
//
// Reads every text file under DATA_DIR (the shared data: .zst through `zstd -dc`, .gz with zlib,
// .zip entries with the small reader below) except the tokenizer models themselves, and writes
// one {"text", "src", "cat"} object per line: windows of lines, paragraph windows and slices of
// every file, string values of JSON/JSONL files, a few long (>= 100 KB) documents, random mixes
// of scripts/whitespace/digits/emoji/combining marks/added-token strings, edge cases, and (own
// category "unicode-new") characters assigned after Unicode 14. ADDED_TOKENS_JSON (optional) is a
// JSON array of added-token strings (the union over the tokenizers under test) used in the mixes.
// Every random choice comes from a fixed-seed generator, so the output depends only on the data.

import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gunzipSync, inflateRawSync } from 'node:zlib';

const [dataDir, outPath, addedPath] = process.argv.slice(2);
if (!dataDir || !outPath) {
  console.error('usage: node gen_strings.mjs DATA_DIR OUT_JSONL [ADDED_TOKENS_JSON]');
  process.exit(2);
}

// ---- deterministic random numbers (sfc32 seeded from a string hash) ----
function hash32(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; ++i) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h >>> 0;
}
function rng(seedText) {
  let a = hash32(seedText) | 0, b = hash32(seedText + '#1') | 0, c = hash32(seedText + '#2') | 0,
      d = 1;
  const next = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; ++i) next();
  const r = {
    f: next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),  // inclusive
    pick: (arr) => arr[Math.floor(next() * arr.length)],
  };
  return r;
}

const out = [];
const counts = {};
function emit(text, src, cat) {
  out.push(JSON.stringify({ text, src, cat }));
  counts[cat] = (counts[cat] ?? 0) + 1;
}

// Code-point-safe slicing of JS (UTF-16) strings: never splits a surrogate pair.
function cpSafe(s, i) {
  if (i > 0 && i < s.length) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff) return i + 1;
  }
  return i;
}
const slice = (s, b, e) => s.slice(cpSafe(s, b), cpSafe(s, Math.min(e, s.length)));

// ---- reading the data set ----
const files = [];  // {label, text}
const skipped = [];
function readZip(buf, label) {
  // End of central directory (PKZIP APPNOTE 4.3.16), then central directory entries (4.3.12).
  let eocd = buf.length - 22;
  while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) --eocd;
  if (eocd < 0) throw new Error(`${label}: no zip end-of-central-directory record`);
  const n = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const entries = [];
  for (let i = 0; i < n; ++i) {
    const method = buf.readUInt16LE(p + 10), csize = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28), extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32), local = buf.readUInt32LE(p + 42);
    const name = buf.toString('utf8', p + 46, p + 46 + nameLen);
    p += 46 + nameLen + extraLen + commentLen;
    if (name.endsWith('/')) continue;
    const dataAt = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(dataAt, dataAt + csize);
    if (method !== 0 && method !== 8) throw new Error(`${label}:${name}: zip method ${method}`);
    entries.push({ name, data: method === 8 ? inflateRawSync(raw) : raw });
  }
  return entries.sort((x, y) => (x.name < y.name ? -1 : 1));
}
function addText(label, buf) {
  if (buf.includes(0)) {
    skipped.push(`${label} (binary)`);
    return;
  }
  files.push({ label, text: buf.toString('utf8') });
}
function walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const rel = relative(dataDir, path);
    if (statSync(path).isDirectory()) {
      walk(path);
      continue;
    }
    // The tokenizer models (vocab/merges JSON, GGUF) are inputs of the test, not text.
    if (/^tokenizers\/[^/]+\/(tokenizer\.[a-z.]*json|[^/]*\.gguf)(\.zst)?$/.test(rel)) {
      skipped.push(`${rel} (tokenizer model)`);
      continue;
    }
    if (rel.endsWith('.zst')) {
      addText(rel.slice(0, -4), execFileSync('zstd', ['-dc', path], { maxBuffer: 1 << 30 }));
    } else if (rel.endsWith('.gz')) {
      addText(rel.slice(0, -3), gunzipSync(readFileSync(path)));
    } else if (rel.endsWith('.zip')) {
      for (const e of readZip(readFileSync(path), rel)) addText(`${rel}:${e.name}`, e.data);
    } else {
      addText(rel, readFileSync(path));
    }
  }
}
walk(dataDir);

// ---- file windows ----
function splitLines(text) {
  return text.split(/(?<=\n)/);  // keeps "\n" / "\r\n" on each line
}
function jsonLeaves(text, label) {
  const leaves = [];
  const visit = (v) => {
    if (typeof v === 'string') {
      if (v.length > 0) leaves.push(v);
    } else if (Array.isArray(v)) {
      v.forEach(visit);
    } else if (v && typeof v === 'object') {
      Object.values(v).forEach(visit);
    }
  };
  if (/\.json$/.test(label)) {
    try {
      visit(JSON.parse(text));
    } catch {
      /* not JSON after all: windows only */
    }
  } else if (/\.jsonl$/.test(label)) {
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try {
        visit(JSON.parse(line));
      } catch {
        /* skip */
      }
    }
  }
  return leaves;
}
function windows(label, text, n, cat) {
  const r = rng(`win:${label}`);
  const lines = splitLines(text);
  for (let i = 0; i < n; ++i) {
    const kind = i % 4;
    let s;
    if (kind === 0) {
      s = lines[r.int(0, lines.length - 1)];  // one line (with its terminator)
    } else if (kind === 1) {
      const b = r.int(0, lines.length - 1);  // paragraph window: consecutive lines
      s = lines.slice(b, b + r.int(2, 20)).join('');
    } else if (kind === 2) {
      const b = r.int(0, text.length - 1);  // a slice starting mid-word
      s = slice(text, b, b + r.int(1, 400));
    } else {
      const b = r.int(0, text.length - 1);
      s = slice(text, b, b + r.int(300, 1500));
    }
    if (s.length > 3000) s = slice(s, 0, 3000);  // a one-line JSON file is not a window
    if (s.length > 0) emit(s, label, cat);
  }
}
function category(label) {
  if (label.includes('flores200')) return 'flores';
  if (label.includes('udhr')) return 'udhr';
  if (/humaneval|code_alpaca|\.jinja$|\.sh$/.test(label)) return 'code';
  if (label.startsWith('prompts_zh/') || label.includes('chinese_classics')) return 'chinese';
  if (label.startsWith('long_context/')) return 'long-context-windows';
  if (label.startsWith('traces/')) return 'traces';
  if (label.startsWith('tokenizers/')) return 'tokenizer-notes';
  return 'prompts';
}
for (const { label, text } of files) {
  const cat = category(label);
  const bytes = Buffer.byteLength(text);
  let n;
  if (cat === 'udhr') n = 6;
  else if (cat === 'flores') n = 60;
  else if (cat === 'traces') n = 40;
  else n = Math.max(12, Math.min(300, Math.round(8 + Math.sqrt(bytes) / 4)));
  windows(label, text, n, cat);
  if (cat === 'flores') {
    const r = rng(`lines:${label}`);
    const lines = text.split('\n').filter((l) => l.length > 0);
    for (let i = 0; i < 260; ++i) emit(r.pick(lines), label, cat);  // whole sentences
  }
  const leaves = jsonLeaves(text, label);
  if (leaves.length > 0) {
    const r = rng(`leaves:${label}`);
    const take = Math.min(leaves.length, cat === 'traces' || cat === 'tokenizer-notes' ? 30 : 700);
    for (let i = 0; i < take; ++i) {
      const leaf = take === leaves.length ? leaves[i] : r.pick(leaves);
      emit(slice(leaf, 0, 2500), label, cat);
    }
  }
}

// ---- long documents (>= 100 KB each) ----
const byLabel = new Map(files.map((f) => [f.label, f.text]));
const longDocs = [
  ['long_context/gutenberg/08_alice_in_wonderland.txt', 0, Infinity],
  ['multilingual/flores200_devtest/hin_Deva.devtest', 0, 60000],
  ['prompts_zh/belle_eval/eval_set.json', 0, 60000],
  ['prompts/sharegpt/ShareGPT_V3_filtered_500.json', 0, 110000],
];
for (const [label, b, e] of longDocs) {
  const t = byLabel.get(label);
  if (t !== undefined) emit(slice(t, b, e), label, 'long-document');
}
{
  // All UDHR translations in one string, and the Chinese classics as plain text.
  const udhr = files.filter((f) => f.label.includes('udhr2.zip:')).map((f) => slice(f.text, 0, 300));
  if (udhr.length > 0) emit(udhr.join('\n'), 'udhr2.zip (first 300 chars of every file)', 'long-document');
  const mengzi = byLabel.get('long_context/chinese_classics/mengzi.json');
  if (mengzi !== undefined) emit(jsonLeaves(mengzi, 'x.json').join('\n'), 'mengzi.json strings', 'long-document');
}

// ---- random mixes ----
const cp = (n) => String.fromCodePoint(n);
const range = (lo, hi) => (r) => cp(r.int(lo, hi));
const word = (gen, lo, hi) => (r) => {
  let s = '';
  for (let i = r.int(lo, hi); i > 0; --i) s += gen(r);
  return s;
};
const oneOf = (...gens) => (r) => r.pick(gens)(r);
const scripts = {
  latin: word((r) => r.pick('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'), 1, 12),
  latinExt: word(oneOf(range(0xc0, 0x24f), range(0x1e00, 0x1eff), range(0x250, 0x2af)), 1, 8),
  greek: word(range(0x391, 0x3c9), 1, 10),
  cyrillic: word(range(0x400, 0x4ff), 1, 10),
  armenianGeorgian: word(oneOf(range(0x531, 0x556), range(0x10d0, 0x10fa)), 1, 8),
  hebrew: word(oneOf(range(0x5d0, 0x5ea), range(0x591, 0x5bd)), 1, 8),
  arabic: word(oneOf(range(0x621, 0x64a), range(0x621, 0x64a), range(0x64b, 0x65f), range(0x660, 0x669)), 1, 10),
  devanagari: word(oneOf(range(0x905, 0x939), range(0x93e, 0x94d), range(0x966, 0x96f)), 1, 10),
  bengaliTamil: word(oneOf(range(0x985, 0x9b9), range(0x9be, 0x9cd), range(0xb85, 0xbb9), range(0xbbe, 0xbcd)), 1, 8),
  thai: word(oneOf(range(0xe01, 0xe3a), range(0xe40, 0xe4e), range(0xe50, 0xe59)), 1, 12),
  ethiopic: word(range(0x1200, 0x1248), 1, 6),
  cjk: word(oneOf(range(0x4e00, 0x9fa5), range(0x4e00, 0x9fa5), range(0x9fa6, 0x9fff), range(0x3400, 0x4dbf),
                  range(0x20000, 0x2a6df), range(0xf900, 0xfaff), range(0x3000, 0x303f), range(0xff01, 0xff5e)), 1, 12),
  kana: word(oneOf(range(0x3041, 0x3096), range(0x30a1, 0x30fc), range(0xff66, 0xff9f), range(0x31f0, 0x31ff)), 1, 10),
  hangul: word(oneOf(range(0xac00, 0xd7a3), range(0xac00, 0xd7a3), range(0x1100, 0x1112), range(0x1161, 0x1175),
                     range(0x11a8, 0x11c2), range(0x3131, 0x318e)), 1, 8),
  mathDeseret: word(oneOf(range(0x1d400, 0x1d454), range(0x1d7ce, 0x1d7ff), range(0x10400, 0x1044f),
                          range(0x12000, 0x12399), range(0x1d100, 0x1d126)), 1, 6),
  symbols: word(oneOf(range(0x2190, 0x21ff), range(0x2200, 0x22ff), range(0x2500, 0x257f), range(0x20a0, 0x20c0),
                      range(0x2100, 0x214f), range(0x2150, 0x218b), range(0x2460, 0x24ff), range(0x2700, 0x27bf),
                      range(0xe000, 0xe0ff), range(0x2070, 0x209c), range(0xa1, 0xbf)), 1, 6),
  controls: word(oneOf(range(0x0, 0x8), range(0xe, 0x1f), range(0x7f, 0x9f), (r) => r.pick(['\ufeff', '\ufffd', '\ufffe',
    '\ufdd0', '\u200e', '\u200f', '\u202a', '\u202e', '\u2066', '\u00ad', '\u034f', '\u2060', '\u180e'])), 1, 3),
};
const whitespace = ['\u0020', '\u0020\u0020', '\t', '\n', '\r\n', '\r', '\n\n', '\r\n\r\n', '\u3000', '\u00a0',
  '\u2028', '\u2029', '\u0085', '\u000b', '\u000c', '\u200b', '\u2009', '\u202f', '\u205f', '\u1680', '\u2000',
  '\u200a', ' \n ', '\t\t', '    ', '\n\n\n', ' \r\n', '\u3000\u3000', '\u00a0 '];
const digitRun = (r) => {
  const k = r.int(0, 9);
  const run = (alphabet, lo, hi) => word((rr) => rr.pick(alphabet), lo, hi)(r);
  if (k <= 3) return run('0123456789', 1, k === 0 ? 40 : 6);
  if (k === 4) return `${run('0123456789', 1, 4)},${run('0123456789', 3, 3)}.${run('0123456789', 1, 3)}`;
  if (k === 5) return `${run('0123456789', 1, 2)}.${run('0123456789', 1, 9)}e-${run('0123456789', 1, 2)}`;
  if (k === 6) return run('٠١٢٣٤٥٦٧٨٩۰۱۲۳۴۵۶۷۸۹', 1, 8);
  if (k === 7) return run('०१२३४५६७८९০১২৩৪৫৬৭৮৯', 1, 8);
  if (k === 8) return run('０１２３４５６７８９²³¹¼½¾ⅠⅡⅫⅯ①②⑳㉑', 1, 6);
  return `${run('0123456789', 4, 4)}-${run('0123456789', 2, 2)}-${run('0123456789', 2, 2)} ${run('0123456789', 2, 2)}:${run('0123456789', 2, 2)}`;
};
const baseEmoji = ['😀', '😂', '🥲', '👍', '👋', '🙏', '❤', '❤️', '🔥', '✨', '🎉', '🤖', '🧠', '🐉', '🍣', '⚽', '☕',
  '🚀', '👨', '👩', '🧑', '👧', '👦', '🏳', '🏴', '✅', '❌', '⭐', '🌍', '💯', '🫠', '🫶'];
const emoji = (r) => {
  const k = r.int(0, 7);
  const tone = () => cp(r.int(0x1f3fb, 0x1f3ff));
  if (k === 0) return r.pick(baseEmoji);
  if (k === 1) return r.pick(['👍', '👋', '🙏', '🧑', '👩', '✋']) + tone();
  if (k === 2) return r.pick(['👨‍👩‍👧‍👦', '🧑‍💻', '🏳️‍🌈', '🏴‍☠️', '👩‍❤️‍💋‍👨', '🐻‍❄️', '❤️‍🔥', '🧑🏽‍🤝‍🧑🏿', '👩🏻‍🔬']);
  if (k === 3) return cp(r.int(0x1f1e6, 0x1f1ff)) + cp(r.int(0x1f1e6, 0x1f1ff));  // flag pair
  if (k === 4) return r.pick(['#', '*', '0', '7']) + '\ufe0f\u20e3';  // keycap
  if (k === 5) return '🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}';  // tag sequence
  if (k === 6) return r.pick(['☺', '☹', '✌', '⚠', '↔']) + r.pick(['\ufe0f', '\ufe0e']);
  return word(() => cp(r.int(0x1f300, 0x1f5ff)), 1, 5)(r);
};
const marks = [[0x300, 0x36f], [0x483, 0x489], [0x591, 0x5bd], [0x64b, 0x65f], [0x93c, 0x94d], [0x1ab0, 0x1ace],
  [0x1dc0, 0x1dff], [0x20d0, 0x20f0], [0xfe20, 0xfe2f], [0x3099, 0x309a]];
const combining = (r) => {
  let s = r.pick(['a', 'e', 'o', 'A', 'n', 'i', 'u', 'Z', 'ı', 'α', 'и', 'ك', 'क', ' ', '1', '-', 'か', '한']);
  for (let i = r.int(1, 5); i > 0; --i) {
    const [lo, hi] = r.pick(marks);
    s += cp(r.int(lo, hi));
  }
  return s;
};
const addedTokens = addedPath ? JSON.parse(readFileSync(addedPath, 'utf8')) : [];
const specialish = ['<｜begin▁of▁sentence｜>', '<｜end▁of▁sentence｜>', '<｜User｜>', '<｜Assistant｜>', '<think>',
  '</think>', '<|im_start|>', '<|im_end|>', '<|endoftext|>', '<|begin_of_text|>', '<|eot_id|>',
  '<|start_header_id|>', '<｜fim▁hole｜>', '<tool_call>', '<｜tool▁calls▁begin｜>'];
const addedish = (r) => {
  const t = addedTokens.length > 0 && r.f() < 0.5 ? r.pick(addedTokens) : r.pick(specialish);
  const k = r.int(0, 5);
  if (k === 0) return t.slice(0, Math.max(1, cpSafe(t, r.int(1, t.length - 1))));  // a prefix only
  if (k === 1) return ` ${t} `;
  if (k === 2) return t.toUpperCase();
  return t;
};
const punct = ['.', ',', '!', '?', '...', '—', '–', '«', '»', '“', '”', '‘', '’', '"', "'", '【', '】', '、', '。',
  '：', '？', '！', '（', '）', '`', '~', '${', '}', '->', '::', '<=', '&&', '||', '#!', '//', '/*', '*/', '@',
  '¿', '¡', '§', '¶', '•', '…', '·', '؟', '،', '।', '॥', '๏', '«»', '()', '[]', '{}', '""', "''"];
const contractions = ["'s", "'S", "'t", "'T", "'re", "'RE", "'ve", "'m", "'ll", "'LL", "'d", "'D", "’s", "n't",
  " I'm", " DON'T", "'", "''", "'x", " it's", "'123"];
const code = ['def f(x):\n    return x ** 2\n', 'for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}',
  'const x = await fetch(`${url}/api?q=${q}`);', 'SELECT * FROM t WHERE id=42;', '#include <vector>\n',
  '    if x != None:\n        pass', '<div class="a">Hello</div>', 'fn main() { println!("{}", 1_000); }',
  'x = [i for i in range(10) if i % 2 == 0]', '$ ls -la | grep "\\.txt$"', '{"key": [1, 2.5, null, true]}',
  'https://example.com/a/b?c=d&e=f#g', 'user.name+tag@example.org', '0x7fffffff', 'λx.x', 'a_b_c', 'camelCaseWord',
  '\t\t\treturn;\n\n', '/* 注释 */', '// コメント'];
const gens = [
  ...Object.values(scripts), ...Object.values(scripts),
  (r) => r.pick(whitespace), (r) => r.pick(whitespace), (r) => r.pick(whitespace).repeat(r.int(1, 5)),
  digitRun, digitRun, emoji, emoji, combining, combining, addedish, addedish,
  (r) => r.pick(punct), (r) => r.pick(punct).repeat(r.int(1, 4)), (r) => r.pick(contractions), (r) => r.pick(code),
];
function mix(r, maxParts) {
  let s = '';
  const focus = r.f() < 0.5 ? r.pick(gens) : null;  // half of the mixes lean on one kind
  for (let i = r.int(1, maxParts); i > 0; --i) {
    s += (focus && r.f() < 0.6 ? focus : r.pick(gens))(r);
    if (r.f() < 0.35) s += r.f() < 0.8 ? ' ' : r.pick(whitespace);
  }
  return s;
}
{
  const r = rng('random-mix');
  for (let i = 0; i < 7000; ++i) emit(mix(r, i % 10 === 0 ? 200 : 30), 'random mix', 'random-mix');
}

// ---- edge cases ----
{
  const r = rng('edge');
  const edge = ['', ' ', '  ', '\n', '\r\n', '\t', '\u3000', '\u00a0', 'a', '0', '00', '000', '0000', "'", "'s",
    ' \n', '\n ', ' a', 'a ', '  a', '\r', '\r\r\n\n', '\u0085', '\u2028', '\ufeff', '\ufffd', '\u{10ffff}',
    '\u{e0001}', '\u{f0000}', '\u{10fffd}', '\u0000', '\u001f', '\u007f', ...specialish, ...specialish.map((t) => t + t),
    ...addedTokens.slice(0, 60)];
  for (const e of edge) emit(e, 'edge case', 'edge');
  const longRuns = [' ', '\n', '\r\n', '\t', '0', '9', 'a', 'Z', '中', '한', '😀', '👍🏽', '\u3000', '.', '-', '=',
    "'", 'é', 'e\u0301', 'ab', '12 ', '<think>', '\u0301', 'ﷺ', 'ñ'];
  for (const u of longRuns) {
    for (const n of [2, 3, 7, 100, 1000, 5000]) emit(u.repeat(n), `run of ${JSON.stringify(u)} x${n}`, 'edge');
  }
  for (let i = 0; i < 300; ++i) {
    // every generator alone, once in a while glued to itself
    const g = r.pick(gens);
    emit(g(r) + (r.f() < 0.3 ? g(r) : ''), 'edge: single generator', 'edge');
  }
}

// ---- characters assigned after Unicode 14 (own category, see README) ----
{
  const r = rng('unicode-new');
  const newer = [
    [0x31350, 0x323af, 'CJK Ext H (15.0)'], [0x2ebf0, 0x2ee5d, 'CJK Ext I (15.1)'],
    [0x11f00, 0x11f10, 'Kawi (15.0)'], [0x1e4d0, 0x1e4f9, 'Nag Mundari (15.0)'],
    [0x1d2c0, 0x1d2d3, 'Kaktovik numerals (15.0)'], [0x1fa75, 0x1fa77, 'emoji (15.0)'], [0x1fabf, 0x1fabf, 'goose emoji (15.0)'],
    [0x10efd, 0x10eff, 'Arabic marks (15.0)'], [0x11b00, 0x11b09, 'Devanagari Ext-A (15.0)'],
    [0x10d40, 0x10d65, 'Garay (16.0)'], [0x105c0, 0x105f3, 'Todhri (16.0)'], [0x16d40, 0x16d6c, 'Kirat Rai (16.0)'],
    [0x1e5d0, 0x1e5fa, 'Ol Onal (16.0)'], [0x1cc00, 0x1ccf9, 'Legacy computing supplement (16.0)'],
  ];
  for (const [lo, hi, name] of newer) {
    for (let i = 0; i < 25; ++i) {
      const core = word(range(lo, hi), 1, 4)(r);
      const ctx = r.pick(['', ' ', 'a', '中', '1', '.', ' the ']);
      emit(ctx + core + r.pick(['', ' ', 'b', '文', '2', '!']), `unicode-new: ${name}`, 'unicode-new');
    }
  }
}

writeFileSync(outPath, out.join('\n') + '\n');
const total = out.length;
console.log(`gen_strings: ${total} strings from ${files.length} text files (seeded; ${JSON.stringify(counts)})`);
console.log(`gen_strings: skipped ${skipped.length}: ${skipped.join(', ')}`);
if (process.env.DIFF_LIST_FILES) console.log(files.map((f) => f.label).join('\n'));
