// Generates the chat-template differential cases (tests/differential/README.md, "Chat templates").
//
//   node gen_chat_cases.mjs TEMPLATES_TSV CASES_PER_TEMPLATE OUT_JSONL
//
// TEMPLATES_TSV: one "name<TAB>file<TAB>profile" line per template (chat_templates.sh writes it).
// The profile says what the template can render, so that every case is one transformers renders
// (a template that concatenates tool-call arguments needs them as strings, DeepSeek-V3.2's needs
// them as objects because transformers has no `from_json` filter, Llama 3.1's takes one tool
// call per message, Qwen3's needs string content on tool-call turns, ...). Each line of OUT_JSONL:
// {"template", "messages", "tools" (array or null), "add_generation_prompt", "kwargs"}.
// Deterministic: a fixed-seed generator (mulberry32), so a failure can be reproduced.
//
// Left out on purpose, where @huggingface/jinja and Python's Jinja2 disagree (docs/chat-templates.md):
// floats with integral values (JSON.parse loses 1.0 vs 1), object keys that look like integers
// (JS orders them first), the whitespace code points Python and JS trim differently (U+001C-1F,
// U+0085, U+FEFF), printing booleans, None or lists with {{ }} (Python spells them True, None,
// ['a']), floats below 1e-4 (Python writes 1e-07, JS 1e-7), text that str.strip/lstrip/rstrip
// with an argument would cut differently (@huggingface/jinja 0.5.11 ignores the argument and
// strips all whitespace), and Llama 3.1's `builtin_tools` (@huggingface/jinja has no `reject`
// filter); the unit tests cover those with outputs worked out from Python's rules.

import { readFileSync, writeFileSync } from 'node:fs';

const [tsvPath, perTemplateArg, outPath] = process.argv.slice(2);
if (!tsvPath || !perTemplateArg || !outPath) {
  console.error('usage: node gen_chat_cases.mjs TEMPLATES_TSV CASES_PER_TEMPLATE OUT_JSONL');
  process.exit(2);
}

let state = 0x5eed1234;
function rand() {  // mulberry32
  state = (state + 0x6d2b79f5) | 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const chance = (p) => rand() < p;
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));

const WORDS = [
  'hello', 'world', 'the', 'KV', 'cache', 'prefill', 'decode', 'latency', '42', '3.14', 'naïve',
  'café', '深度求索', '你好', '世界', 'привет', 'مرحبا', 'שלום', '🙂', '🚀', 'x²', '{{ not_a_tag }}',
  '{% raw %}', "it's", '"quoted"', 'back\\slash', 'tab\there', 'a<b>', '&amp;',
  '<tool_response>', '</tool_response>', '｜', 'end.', '?', '!', ',', '   ', '\n',
  '\n\n', ' \t ',
];
function text(min = 1, max = 12) {
  const n = int(min, max);
  const parts = [];
  for (let i = 0; i < n; ++i) parts.push(pick(WORDS));
  let s = parts.join(chance(0.8) ? ' ' : '');
  if (chance(0.15)) s = ' ' + s;
  if (chance(0.15)) s = s + '\n';
  return s;
}
// Text with no whitespace at either end except newlines, for the parts templates strip with
// .strip('\n') / .lstrip('\n') (see the file comment: @huggingface/jinja ignores the argument).
function tight() {
  return text().trim() || 'x';
}
function thoughtful() {
  if (!chance(0.3)) return (chance(0.2) ? '\n' : '') + (text().replace(/^\s+/, '') || 'x');
  const nl = () => pick(['', '\n', '\n\n']);
  return (chance(0.5) ? '<think>' + nl() : '') + tight() + nl() + '</think>' + nl() + tight();
}

const TOOL_NAMES = ['get_weather', 'search', 'run_sql', 'lookup_user'];
function toolSchema(name) {
  return {
    type: 'function',
    function: {
      name,
      description: text(2, 8),
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', description: 'a city' }, days: { type: 'integer' } },
        required: ['city'],
      },
    },
  };
}
function argsObject(stringValues) {
  const a = { city: pick(['Paris', '北京', 'São Paulo', 'a "quoted" town']) };
  if (chance(0.5)) a.days = stringValues ? String(int(1, 9)) : int(1, 9);
  if (!stringValues && chance(0.3)) a.ratio = pick([0.5, 2.25, -1.75, 1234.5678]);
  if (!stringValues && chance(0.3)) a.flags = [true, false, null];
  if (!stringValues && chance(0.2)) a.nested = { k: 'v', list: [1, 'two'] };
  return a;
}
function toolCall(profile) {
  const args = argsObject(profile.stringArgValues);
  let form = profile.args;  // 'string' | 'object' | 'either'
  if (form === 'either') form = chance(0.5) ? 'string' : 'object';
  return {
    type: 'function',
    id: 'call_' + int(1000, 9999),
    function: { name: pick(TOOL_NAMES), arguments: form === 'string' ? JSON.stringify(args) : args },
  };
}

// What each template can render (see the file comment).
const PROFILES = {
  concat: { tools: false, args: 'string', toolContent: 'null', multiCall: true },
  r1: { tools: false, args: 'string', toolContent: 'any', multiCall: true },
  either: { tools: true, args: 'either', toolContent: 'any', multiCall: true },
  v31: { tools: false, args: 'either', toolContent: 'any', multiCall: true, thinking: true },
  v32: { tools: true, args: 'object', toolContent: 'any', multiCall: true, thinking: true, reasoning: true },
  distill: { tools: false, args: 'either', toolContent: 'any', multiCall: true, thinking: true },
  llama3: { tools: false, toolCalls: false },
  llama31: { tools: true, args: 'object', toolContent: 'any', multiCall: false, llama: true },
  qwen25: { tools: true, args: 'either', toolContent: 'any', multiCall: true },
  qwen3: { tools: true, args: 'either', toolContent: 'string', multiCall: true, thinking: true, reasoning: true },
};

function assistantWithCalls(profile) {
  const calls = [];
  // A template that takes one call per message raises on two (Llama 3.1's raise_exception):
  // a few such cases check that both sides raise.
  const n = profile.multiCall ? int(1, 3) : chance(0.1) ? 2 : 1;
  for (let i = 0; i < n; ++i) calls.push(toolCall(profile));
  let content;
  if (profile.toolContent === 'null') content = null;
  else if (profile.toolContent === 'string') content = chance(0.5) ? '' : text();
  else content = pick([null, '', text()]);
  return { role: 'assistant', content, tool_calls: calls };
}

function conversation(profile) {
  const messages = [];
  if (chance(0.6)) messages.push({ role: 'system', content: text(2, 20) });
  if (chance(0.1)) messages.push({ role: 'system', content: text(1, 6) });
  const rounds = int(1, 4);
  for (let r = 0; r < rounds; ++r) {
    messages.push({ role: 'user', content: text(1, 20) });
    const last = r === rounds - 1;
    if (last && chance(0.6)) break;  // end on a user turn (the usual generation case)
    if (profile.toolCalls !== false && chance(0.35)) {
      const call = assistantWithCalls(profile);
      messages.push(call);
      for (let i = 0; i < call.tool_calls.length; ++i) {
        messages.push({ role: 'tool', content: text(1, 10), tool_call_id: call.tool_calls[i].id });
      }
    }
    const answer = { role: 'assistant', content: thoughtful() };
    if (profile.reasoning && chance(0.3)) answer.reasoning_content = tight();
    if (profile.thinking && chance(0.1)) answer.prefix = chance(0.5);
    messages.push(answer);
  }
  return messages;
}

function kwargsFor(profile, special) {
  const k = { ...special };
  if (profile.thinking || chance(0.2)) {
    if (chance(0.4)) k.thinking = chance(0.5);
    if (chance(0.4)) k.enable_thinking = chance(0.5);
  }
  if (profile.llama) {
    if (chance(0.3)) k.date_string = pick(['1 Jan 2025', '26 Jul 2024']);
    if (chance(0.3)) k.tools_in_user_message = false;
  }
  return k;
}

const lines = [];
const templates = readFileSync(tsvPath, 'utf8').split('\n').filter((l) => l.trim().length > 0);
const perTemplate = Number(perTemplateArg);
for (const line of templates) {
  const [name, , profileName, bos, eos] = line.split('\t');
  const profile = PROFILES[profileName];
  if (!profile) throw new Error(`unknown profile ${profileName} for ${name}`);
  const special = {};
  if (bos) special.bos_token = bos;
  if (eos) special.eos_token = eos;
  for (let i = 0; i < perTemplate; ++i) {
    const messages = conversation(profile);
    const tools = profile.tools && chance(0.4) ? TOOL_NAMES.slice(0, int(1, 3)).map(toolSchema) : null;
    const addGen = messages[messages.length - 1].role !== 'assistant' ? chance(0.85) : chance(0.2);
    lines.push(JSON.stringify({ template: name, messages, tools, add_generation_prompt: addGen, kwargs: kwargsFor(profile, special) }));
  }
}
writeFileSync(outPath, lines.join('\n') + '\n');
console.log(`gen_chat_cases: ${lines.length} cases for ${templates.length} templates`);
