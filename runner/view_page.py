"""The `spec view` page: one self-contained HTML file (no network), from the headline figures to the cells,
from a cell to its rows, from a row to its transcript, with filters.

A suite is a stranger's data, so no text of it ever becomes markup: the data travel as JSON inside a
`<script type="application/json">` element with `<`, `>` and `&` written as JSON escapes (no text can close
the element), control and reordering characters made visible (spec_audits.base.terminal), and the script puts
every text on the page with `textContent`, never `innerHTML` (docs/threat-model.md;
tests/runner/test_view_browser.py plants markup and checks it shows as text and never runs).
"""

from __future__ import annotations

import json
from typing import Any

from spec_audits.base.terminal import visible

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; font-size: 15px; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
tr.pick { cursor: pointer; } tr.pick:hover { background: #eef4ff; } tr.chosen { background: #dde8ff; }
.filters label { margin-right: 1em; display: inline-block; }
.caveat { background: #fff4d6; border: 1px solid #e0b84c; padding: 0.5em 0.8em; }
.turn { border-left: 4px solid #bbb; margin: 0.6em 0; padding: 0.3em 0.8em; white-space: pre-wrap; }
.turn.user { border-color: #4a7fd4; } .turn.assistant { border-color: #3a9a5b; }
.turn.system { border-color: #888; } .turn.judge, .turn.extraction { border-color: #b0652a; }
.turn.note { border-color: #c33; } .role { font-weight: bold; display: block; white-space: normal; }
.muted { color: #666; }
"""

SCRIPT = r"""
const D = JSON.parse(document.getElementById('data').textContent);
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text); if (cls) e.className = cls; return e; };
const factors = Object.keys(D.factors);
const state = {cell: null, row: null};
const ROW_LIMIT = 500;

function option(select, value, label) { const o = el('option', label); o.value = value; select.appendChild(o); }
function selectFor(label, id, values, cls, key) {
  const wrap = el('label', label + ' '); const s = el('select'); s.id = id; if (cls) s.className = cls;
  if (key !== undefined) s.dataset.factor = key;
  option(s, '*', '(all)'); values.forEach((v) => option(s, v, v === '' ? '(none)' : v));
  s.addEventListener('change', () => { state.cell = null; state.row = null; render(); });
  wrap.appendChild(s); $('filters').appendChild(wrap); return s;
}
function answerOf(r) { return r.parsed ? r.answer : '(unparsed)'; }
function cellKey(r) { return JSON.stringify([r.model, factors.map((f) => r.cell[f] ?? '')]); }
function passes(r) {
  for (const s of document.querySelectorAll('select.factor')) {
    if (s.value !== '*' && (r.cell[s.dataset.factor] ?? '') !== s.value) return false; }
  if ($('filter-model').value !== '*' && r.model !== $('filter-model').value) return false;
  if ($('filter-answer').value !== '*' && answerOf(r) !== $('filter-answer').value) return false;
  const p = $('filter-parsed').value;
  if (p === 'parsed' && !r.parsed) return false; if (p === 'unparsed' && r.parsed) return false;
  return true;
}
function table(id, header) {
  const t = $(id); t.replaceChildren(); const tr = el('tr'); header.forEach((h) => tr.appendChild(el('th', h)));
  const head = el('thead'); head.appendChild(tr); t.appendChild(head); const body = el('tbody'); t.appendChild(body);
  return body;
}
function counts(rows) {
  const c = {}; rows.forEach((r) => { const a = answerOf(r); c[a] = (c[a] || 0) + 1; }); return c; }
function share(rows) { const c = counts(rows);
  return Object.keys(c).sort().map((a) => a + ' ' + (100 * c[a] / rows.length).toFixed(1) + '%').join(', '); }

function renderLevels(rows) {
  const by = $('by').value; const groups = new Map();
  rows.forEach((r) => { const k = JSON.stringify([r.model, r.cell[by] ?? '']);
    if (!groups.has(k)) groups.set(k, []); groups.get(k).push(r); });
  const body = table('levels', ['model', by, 'n', 'parsed', 'answers (share of n)']);
  [...groups.keys()].sort().forEach((k) => { const [model, level] = JSON.parse(k); const g = groups.get(k);
    const tr = el('tr', null, 'pick'); tr.dataset.level = level;
    [model, level, g.length, g.filter((r) => r.parsed).length, share(g)].forEach((v) => tr.appendChild(el('td', v)));
    tr.addEventListener('click', () => { const s = [...document.querySelectorAll('select.factor')]
        .find((x) => x.dataset.factor === by); s.value = level; state.cell = null; state.row = null; render(); });
    body.appendChild(tr); });
}
function renderCells(rows) {
  const groups = new Map(); rows.forEach((r) => { const k = cellKey(r);
    if (!groups.has(k)) groups.set(k, []); groups.get(k).push(r); });
  const body = table('cells', ['model', ...factors, 'n', 'parsed', 'answers (share of n)']);
  const keys = [...groups.keys()].sort();
  $('cells-note').textContent = keys.length + ' cells' + (keys.length > ROW_LIMIT
    ? ' (the first ' + ROW_LIMIT + ' listed; filter to see others)' : '');
  keys.slice(0, ROW_LIMIT).forEach((k) => { const g = groups.get(k); const [model, levels] = JSON.parse(k);
    const tr = el('tr', null, 'pick' + (state.cell === k ? ' chosen' : ''));
    [model, ...levels, g.length, g.filter((r) => r.parsed).length, share(g)]
      .forEach((v) => tr.appendChild(el('td', v)));
    tr.addEventListener('click', () => { state.cell = k; state.row = null; render(); });
    body.appendChild(tr); });
}
function renderRows(rows) {
  const shown = state.cell === null ? rows : rows.filter((r) => cellKey(r) === state.cell);
  $('rows-note').textContent = (state.cell === null ? 'All filtered rows' : 'Rows of the chosen cell') + ': '
    + shown.length + (shown.length > ROW_LIMIT ? ' (the first ' + ROW_LIMIT + ' listed; filter to see others)' : '');
  const body = table('rows', ['model', 'item', 'sample', ...factors, 'answer', 'meaning', 'cached']);
  shown.slice(0, ROW_LIMIT).forEach((r) => { const tr = el('tr', null, 'pick' + (state.row === r ? ' chosen' : ''));
    [r.model, r.item, r.sample, ...factors.map((f) => r.cell[f] ?? ''), answerOf(r), r.outcome ?? '',
     r.cached ? 'cached' : 'fresh'].forEach((v) => tr.appendChild(el('td', v)));
    tr.addEventListener('click', () => { state.row = r; render(); $('transcript').scrollIntoView(); });
    body.appendChild(tr); });
}
function renderTranscript() {
  const t = $('transcript'); t.replaceChildren(); const r = state.row;
  if (r === null) { t.appendChild(el('p', 'Click a row to read its transcript.', 'muted')); return; }
  const facts = el('table'); facts.id = 'facts';
  const meaning = r.parsed ? r.answer + ' = ' + (r.outcome ?? '') : 'no valid answer';
  [['run', r.run], ['model', r.model], ['item', r.item + ' sample ' + r.sample],
   ['cell', factors.map((f) => f + '=' + (r.cell[f] ?? '')).join(', ')], ['parsed answer', meaning],
   ['valid answers', Object.entries(r.answers).map(([k, v]) => k + ' = ' + v).join(', ')],
   ['answered turns', Object.entries(r.turn_answers).map(([k, v]) => k + ': ' + (v ?? 'no valid answer')).join(', ')],
   ['from cache', r.cached ? 'cached (every call from the response cache)' : 'fresh'], ['error', r.error ?? '']]
    .forEach(([k, v]) => { if (v === '') return; const tr = el('tr'); tr.appendChild(el('th', k));
      tr.appendChild(el('td', v)); facts.appendChild(tr); });
  t.appendChild(facts);
  r.transcript.forEach((turn) => { const d = el('div', null, 'turn ' + turn.role);
    d.appendChild(el('span', turn.role + (turn.note ? ' (' + turn.note + ')' : ''), 'role'));
    d.appendChild(document.createTextNode(turn.text)); t.appendChild(d); });
}
function render() {
  const rows = D.rows.filter(passes); $('count').textContent = rows.length + ' of ' + D.rows.length + ' answers';
  renderLevels(rows); renderCells(rows); renderRows(rows); renderTranscript();
}
function init() {
  document.title = 'Transcripts: ' + D.title; $('title').textContent = 'Transcripts: ' + D.title;
  D.runs.forEach((run) => $('runs').appendChild(el('li', run.run + ': ' + run.model + ' (' + run.mode + ')')));
  if (D.runs.some((run) => run.embedded)) $('caveat').hidden = false;
  if (D.headline === null) { $('headline').hidden = true; $('headline-note').textContent =
      'Score the run (spec score) and write this page again to see its headline figures here.'; } else {
    const hb = table('headline', D.headline.header); D.headline.rows.forEach((row) => { const tr = el('tr');
      row.forEach((v) => tr.appendChild(el('td', v))); hb.appendChild(tr); });
    $('headline-note').textContent = D.headline.note; }
  factors.forEach((f, i) => selectFor(f, 'filter-factor-' + i, D.factors[f], 'factor', f));
  selectFor('model', 'filter-model', [...new Set(D.rows.map((r) => r.model))].sort());
  selectFor('answer', 'filter-answer', [...new Set(D.rows.map(answerOf))].sort());
  const parsed = selectFor('parsed', 'filter-parsed', []);
  option(parsed, 'parsed', 'parsed'); option(parsed, 'unparsed', 'unparsed');
  factors.forEach((f) => option($('by'), f, f)); $('by').addEventListener('change', render);
  render();
}
init();
"""

BODY = """<h1 id="title"></h1>
<ul id="runs"></ul>
<p id="caveat" class="caveat" hidden>The embedded base model (gemma-3-270m, 270M parameters, not instruction-tuned
for audits) answered at least one of these runs: its answers show that the pipeline works, not how a deployed
model behaves. Read no finding into them.</p>
<h2>Headline figures</h2>
<table id="headline"></table>
<p id="headline-note" class="muted"></p>
<h2>Filters</h2>
<div id="filters" class="filters"></div>
<p id="count"></p>
<h2>Answers by level</h2>
<p class="muted">Each row is one model and one level of the factor chosen here; click it to filter by that level.
n counts answers; "parsed" those that gave a valid answer; the shares are of n.
Factor: <select id="by"></select></p>
<table id="levels"></table>
<h2>Cells</h2>
<p class="muted">One row per model and cell (every factor's level); click a cell to list its rows.</p>
<p id="cells-note" class="muted"></p>
<table id="cells"></table>
<h2>Rows</h2>
<p id="rows-note" class="muted"></p>
<table id="rows"></table>
<h2>Transcript</h2>
<div id="transcript"></div>
"""


def _shown(value: Any) -> Any:
    """`value` with every text's control and reordering characters made visible (line breaks kept)."""
    if isinstance(value, str):
        return visible(value, keep_newlines=True)
    if isinstance(value, dict):
        return {_shown(key): _shown(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shown(item) for item in value]
    return value


def embedded_json(data: dict[str, Any]) -> str:
    """`data` as JSON that no text in it can end a script element with (`<`, `>`, `&` escaped)."""
    text = json.dumps(_shown(data), ensure_ascii=True, sort_keys=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_page(data: dict[str, Any]) -> str:
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "script-src 'unsafe-inline'; style-src 'unsafe-inline'\">"
            f"<title>Transcripts</title><style>{STYLE}</style></head><body>\n{BODY}"
            f'<script type="application/json" id="data">{embedded_json(data)}</script>\n'
            f"<script>{SCRIPT}</script>\n</body></html>\n")
