// Reference side of the chat-template differential test: npm @huggingface/jinja renders the cases
// of gen_chat_cases.mjs with the variables transformers' apply_chat_template passes
// (messages, tools (null when absent), documents (null), add_generation_prompt, the special
// tokens of tokenizer_config.json, then the case's kwargs).
//
//   node chat_reference.mjs TEMPLATES_TSV CASES_JSONL OUT_JSONL
//
// Writes one line per case, in order: {"ok": true, "output": "..."} or {"ok": false, "error": "..."}.
// The package is found through NODE_PATH (chat_templates.sh points it at build/npm-ref/node_modules).

import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const { Template } = require('@huggingface/jinja');

const [tsvPath, casesPath, outPath] = process.argv.slice(2);
if (!tsvPath || !casesPath || !outPath) {
  console.error('usage: node chat_reference.mjs TEMPLATES_TSV CASES_JSONL OUT_JSONL');
  process.exit(2);
}

const tokenText = (v) => (typeof v === 'string' ? v : v && typeof v.content === 'string' ? v.content : null);

const templates = new Map();
for (const line of readFileSync(tsvPath, 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const [name, file] = line.split('\t');
  let source = readFileSync(file, 'utf8');
  const special = {};
  if (file.endsWith('.json')) {
    const config = JSON.parse(source);
    source = config.chat_template;
    for (const key of ['bos_token', 'eos_token', 'unk_token', 'pad_token']) {
      const t = tokenText(config[key]);
      if (t !== null) special[key] = t;
    }
  }
  templates.set(name, { template: new Template(source), special });
}

const out = [];
for (const line of readFileSync(casesPath, 'utf8').split('\n')) {
  if (!line) continue;
  const c = JSON.parse(line);
  const { template, special } = templates.get(c.template);
  const context = {
    messages: c.messages,
    tools: c.tools,
    documents: null,
    add_generation_prompt: c.add_generation_prompt,
    ...special,
    ...c.kwargs,
  };
  try {
    out.push(JSON.stringify({ ok: true, output: template.render(context) }));
  } catch (e) {
    out.push(JSON.stringify({ ok: false, error: String(e.message || e) }));
  }
}
writeFileSync(outPath, out.join('\n') + '\n');
console.log(`chat_reference: rendered ${out.length} cases`);
