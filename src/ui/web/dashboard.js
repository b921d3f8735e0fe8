// Tessera's dashboard: reads serve's read-only JSON API (docs/observability.md) and draws queues,
// workloads, the GPU map, cost and trends. Everything taken from the API reaches the DOM through
// textContent or setAttribute, never as markup. With a snapshot embedded in the page
// (`tessera sim replay --report`), it reads that instead and does not poll.
'use strict';

const POLL_MS = 5000;
const TOKEN_KEY = 'tessera.apiToken';
const PALETTE = ['#2f6fdf', '#e0631d', '#12a150', '#c0267a', '#7a4de0', '#0e9aa7', '#b8860b',
                 '#d92d20', '#4e5ba6', '#5f8f00', '#9c4221', '#0b7285'];

const snapshotText = document.getElementById('tessera-snapshot').textContent.trim();
const SNAPSHOT = snapshotText && !snapshotText.startsWith('/*') ? JSON.parse(snapshotText) : null;

const state = { tab: 'queues', data: {}, selected: null, queueColors: new Map(), timer: null };

// ---- DOM helpers (text only) --------------------------------------------------------------

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'onclick') e.addEventListener('click', v);
    else e.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function svg(tag, attrs, ...children) {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function replace(id, ...nodes) {
  document.getElementById(id).replaceChildren(...nodes.flat());
}

function table(headers, rows) {
  const head = el('tr', {}, headers.map(h => typeof h === 'string'
      ? el('th', {}, h) : el('th', { class: h.cls }, h.text)));
  return el('table', {}, el('thead', {}, head), el('tbody', {}, rows));
}

// ---- formatting -----------------------------------------------------------------------------

function fmtDuration(s) {
  if (s === null || s === undefined || !isFinite(s)) return '—';
  s = Math.max(0, s);
  if (s < 60) return `${Math.round(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${Math.round(s % 60) ? ` ${Math.round(s % 60)}s` : ''}`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.round((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.round((s % 86400) / 3600)}h`;
}

// A span as the engine writes it in reasons (src/engine/time/span.h FormatSpan, rounded up):
// "45s", "12m", "3h10m", "2d4h", so that a start column and its reason say the same.
function fmtSpan(s) {
  if (!isFinite(s)) return 'forever';
  s = Math.ceil(Math.min(Math.max(s, 0), 1e15));
  if (s < 60) return `${s}s`;
  const m = Math.floor((s + 59) / 60);
  if (m < 60) return `${m}m`;
  if (m < 24 * 60) return m % 60 ? `${Math.floor(m / 60)}h${m % 60}m` : `${m / 60}h`;
  const h = Math.floor((m + 59) / 60);
  return h % 24 ? `${Math.floor(h / 24)}d${h % 24}h` : `${h / 24}d`;
}

// A replay's report (SNAPSHOT.clock.simulated): times are simulated seconds since the
// simulation's t=0, carried as times since 1970; they are shown as that elapsed time.
const SIMULATED = !!(SNAPSHOT && SNAPSHOT.clock && SNAPSHOT.clock.simulated);

function fmtElapsed(ms) {
  let s = Math.floor(Math.max(ms, 0) / 1000);
  const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600);
  const m = Math.floor(s % 3600 / 60);
  s %= 60;
  if (d) return `+${d}d${h}h${m}m`;
  if (h) return `+${h}h${m}m`;
  if (m) return `+${m}m${s ? `${s}s` : ''}`;
  return `+${s}s`;
}

function nowMs() {
  // In a snapshot, "now" is the snapshot's instant (the peak of the GPU allocation unless
  // --report-at says otherwise), not the reader's clock.
  const at = SNAPSHOT && (SNAPSHOT.clock?.snapshot || SNAPSHOT.workloads?.time || SNAPSHOT.summary?.time);
  const t = at ? Date.parse(at) : NaN;
  return Number.isFinite(t) ? t : Date.now();
}

function fmtTime(iso) {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (!isFinite(t)) return String(iso);
  if (SIMULATED) return fmtElapsed(t);
  return new Date(t).toISOString().replace('T', ' ').replace(/\.\d+Z$|Z$/, 'Z');
}

// "in 12m (2026-11-24 05:00:00Z)" / "now" / "5m ago".
function fmtWhen(iso) {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (!isFinite(t)) return String(iso);
  const d = (t - nowMs()) / 1000;
  const rel = Math.abs(d) < 1 ? 'now' : d > 0 ? `in ${fmtSpan(d)}` : `${fmtSpan(-d)} ago`;
  return `${rel} (${fmtTime(iso)})`;
}

// A trend axis's end: the time of day, or a replay's elapsed time.
function axisTime(ms) {
  const s = fmtTime(new Date(ms).toISOString());
  return SIMULATED ? s : s.slice(11);
}

function fmtQty(resource, v) {
  if (v === null || v === undefined) return '—';
  if (resource === 'memory' || /storage/.test(resource)) {
    const gi = v / 2 ** 30;
    if (v === 0) return '0';
    return gi >= 1 ? `${+gi.toFixed(1)}Gi` : `${+(v / 2 ** 20).toFixed(0)}Mi`;
  }
  return Number.isInteger(v) ? String(v) : v.toFixed(2);
}

function fmtMoney(v, currency) {
  if (v === null || v === undefined) return '—';
  return `${v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}` +
         (currency && currency !== 'USD' ? ` ${currency}` : '');
}

function num(v, digits = 1) {
  return v === null || v === undefined ? '—' : (+v).toFixed(digits).replace(/\.0+$/, '');
}

// ---- data -----------------------------------------------------------------------------------

function token() { return sessionStorage.getItem(TOKEN_KEY); }

class HttpError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(path) {
  if (SNAPSHOT) return fromSnapshot(path);
  const headers = { Accept: 'application/json' };
  if (token()) headers.Authorization = `Bearer ${token()}`;
  const res = await fetch(path, { headers, cache: 'no-store' });
  if (!res.ok) {
    let msg = res.statusText;
    try { msg = (await res.json()).error || msg; } catch (e) { /* not JSON */ }
    throw new HttpError(res.status, msg);
  }
  return res.json();
}

function fromSnapshot(path) {
  const [route, query] = path.split('?');
  const key = route.replace('/api/v1/', '');
  if (key.startsWith('workloads/')) {
    const [, ns, name] = key.split('/').map(decodeURIComponent);
    const w = (SNAPSHOT.workloads?.items || []).find(x => x.namespace === ns && x.name === name);
    if (!w) return Promise.reject(new HttpError(404, 'not in the snapshot'));
    return Promise.resolve(w);
  }
  if (!(key in SNAPSHOT) || SNAPSHOT[key] === null) {
    return Promise.reject(new HttpError(404, `no ${key} in this report`));
  }
  void query;
  return Promise.resolve(SNAPSHOT[key]);
}

function queueColor(cq) {
  if (!cq) return '#98a2b3';
  if (!state.queueColors.has(cq)) {
    let h = 0;
    for (const ch of cq) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    state.queueColors.set(cq, `hsl(${h % 360} 60% 45%)`);
  }
  return state.queueColors.get(cq);
}

// Colours follow the sorted ClusterQueue names, so a queue keeps its colour across refreshes.
function assignQueueColors(queues) {
  const names = queues.map(q => q.name).sort();
  names.forEach((n, i) => {
    if (i < PALETTE.length) state.queueColors.set(n, PALETTE[i]);
  });
}

// ---- views ----------------------------------------------------------------------------------

function renderSummary(s) {
  const card = (k, v, id) => el('div', { class: 'card', id }, el('div', { class: 'v' }, v ?? '—'),
                               el('div', { class: 'k' }, k));
  replace('summary',
      card('GPUs allocated', `${s.gpusAllocated ?? '—'} / ${s.gpus ?? '—'}`, 'card-gpus'),
      card('nodes', s.nodes, 'card-nodes'),
      card('idle GPU nodes', s.idleGpuNodes, 'card-idle'),
      card('admitted workloads', s.admittedWorkloads, 'card-admitted'),
      card('pending workloads', s.pendingWorkloads, 'card-pending'),
      card(SNAPSHOT ? 'the cluster at' : (s.leader ? 'leader' : 'standby'),
           s.synced === false ? 'syncing' : fmtTime(s.time), 'card-time'));
}

function usageBar(r) {
  const cap = Math.max(r.nominal + (r.borrowingLimit ?? r.borrowed ?? 0), r.used, 1);
  const own = Math.min(r.used - (r.borrowed || 0), r.nominal);
  return el('div', { class: 'bar', title: `used ${r.used} of nominal ${r.nominal}` },
      el('span', { class: 'used', style: `left:0;width:${100 * Math.max(own, 0) / cap}%` }),
      el('span', { class: 'borrowed',
                   style: `left:${100 * Math.max(own, 0) / cap}%;width:${100 * (r.borrowed || 0) / cap}%` }));
}

function renderQueues(q) {
  const rows = [];
  for (const cq of q.items) {
    const res = cq.resources.length ? cq.resources : [null];
    const reasons = Object.entries(cq.pendingByReason || {}).sort((a, b) => b[1] - a[1]);
    const reservation = cq.reservation
        ? [el('div', {}, cq.reservation.workload),
           el('div', { class: 'muted' }, `starts ${fmtWhen(cq.reservation.expectedStart)}`)]
        : el('span', { class: 'muted' }, 'none');
    res.forEach((r, i) => {
      const first = i === 0;
      const span = first ? res.length : 0;
      const cells = [];
      if (first) {
        cells.push(el('td', { rowspan: span, 'data-queue': cq.name },
            el('span', { class: 'swatch', style: `background:${queueColor(cq.name)}` }), cq.name,
            el('div', { class: 'muted' }, `${cq.cohort ? `cohort ${cq.cohort} · ` : ''}${cq.strategy || ''}`)));
      }
      cells.push(el('td', {}, r ? r.flavor : '—'), el('td', {}, r ? r.resource : '—'),
          el('td', { class: 'num' }, r ? fmtQty(r.resource, r.nominal) : '—'),
          el('td', { class: 'num used' }, r ? fmtQty(r.resource, r.used) : '—'),
          el('td', { class: 'num' }, r ? fmtQty(r.resource, r.borrowed) : '—'),
          el('td', { class: 'num' }, r && r.borrowingLimit !== null ? fmtQty(r.resource, r.borrowingLimit) : '∞'),
          el('td', {}, r ? usageBar(r) : ''));
      if (first) {
        cells.push(
            el('td', { rowspan: span, class: 'num' }, cq.admitted),
            el('td', { rowspan: span, class: 'num' },
               `${cq.pending.active + cq.pending.inadmissible}`,
               el('div', { class: 'muted' }, `${cq.pending.active} active · ${cq.pending.inadmissible} inadmissible`)),
            el('td', { rowspan: span, class: 'reasons' },
               reasons.length ? reasons.map(([k, v]) => el('div', {}, `${v} × ${k}`))
                              : el('span', { class: 'muted' }, '—')),
            el('td', { rowspan: span, class: 'num' }, cq.weightedShare === null ? '—' : num(cq.weightedShare, 3)),
            el('td', { rowspan: span }, reservation));
      }
      rows.push(el('tr', { 'data-queue': cq.name, 'data-resource': r ? r.resource : null }, cells));
    });
  }
  replace('queues', q.items.length ? table(['queue', 'flavor', 'resource', { text: 'nominal', cls: 'num' },
      { text: 'used', cls: 'num' }, { text: 'borrowed', cls: 'num' }, { text: 'borrow limit', cls: 'num' },
      'usage', { text: 'admitted', cls: 'num' }, { text: 'pending', cls: 'num' }, 'pending by reason',
      { text: 'weighted share', cls: 'num' }, 'reservation'], rows)
      : el('p', { class: 'muted' }, 'No ClusterQueues.'));
}

function podsCell(w) {
  if (!w.pods || !w.pods.length) return el('span', { class: 'muted' }, '—');
  const byNode = new Map();
  for (const p of w.pods) {
    const k = p.node || '(unplaced)';
    if (!byNode.has(k)) byNode.set(k, []);
    byNode.get(k).push(p);
  }
  return [...byNode].map(([node, pods]) => {
    const idx = pods.flatMap(p => p.gpuIndices || []);
    return el('div', { class: 'pod' }, `${pods.length} pod${pods.length > 1 ? 's' : ''} → ${node}`,
        idx.length ? el('span', { class: 'muted' }, ` GPU ${idx.join(',')}`) : null);
  });
}

function workloadMatches(w) {
  const ns = document.getElementById('wl-ns').value;
  const st = document.getElementById('wl-state').value;
  const q = document.getElementById('wl-search').value.trim().toLowerCase();
  if (ns && w.namespace !== ns) return false;
  if (st && w.state !== st) return false;
  if (!q) return true;
  const hay = [w.namespace, w.name, w.localQueue, w.clusterQueue, w.flavor, w.reason,
               ...(w.pods || []).map(p => p.node)].filter(Boolean).join(' ').toLowerCase();
  return hay.includes(q);
}

function renderWorkloads(wl) {
  const select = document.getElementById('wl-ns');
  const namespaces = [...new Set(wl.items.map(w => w.namespace))].sort();
  const current = select.value;
  const listed = [...select.options].slice(1).map(o => o.value);
  if (listed.join('\n') !== namespaces.join('\n')) select.replaceChildren(el('option', { value: '' }, 'all'),
      ...namespaces.map(ns => el('option', { value: ns }, ns)));
  select.value = namespaces.includes(current) ? current : '';
  const items = wl.items.filter(workloadMatches);
  const rows = items.map(w => {
    const key = `${w.namespace}/${w.name}`;
    return el('tr', { class: `clickable${state.selected === key ? ' selected' : ''}`, 'data-workload': key,
                      onclick: () => { state.selected = key; renderWorkloads(state.data.workloads); explain(w); } },
        el('td', {}, w.namespace, '/', el('b', {}, w.name)),
        el('td', {}, el('span', { class: `pill ${w.state}` }, w.state)),
        el('td', { class: 'num' }, w.priority, w.priorityClass ? el('div', { class: 'muted' }, w.priorityClass) : null),
        el('td', {}, w.clusterQueue ? el('span', { class: 'swatch', style: `background:${queueColor(w.clusterQueue)}` }) : null,
           w.clusterQueue || '—', w.localQueue ? el('div', { class: 'muted' }, `via ${w.localQueue}`) : null),
        el('td', { class: 'num' }, w.gpus, w.flavor ? el('div', { class: 'muted' }, w.flavor) : null),
        el('td', { class: 'num' }, fmtDuration(w.waitSeconds)),
        el('td', { class: 'expected' }, w.state === 'pending' ? fmtWhen(w.expectedStart)
                                                               : el('span', { class: 'muted' }, `admitted ${fmtWhen(w.admittedAt)}`)),
        el('td', { class: 'reason' }, w.reason || ''),
        el('td', {}, podsCell(w)));
  });
  // A report's snapshot is of one instant and bounded (docs/observability.md).
  const note = SNAPSHOT && wl.time ? el('p', { class: 'muted', id: 'wl-snapshot' },
      `The cluster at ${fmtTime(wl.time)}: ${wl.items.length} of ${wl.total ?? wl.items.length} ` +
      'pending and running workloads listed.') : null;
  replace('workloads', note, items.length ? table(['workload', 'state', { text: 'priority', cls: 'num' }, 'queue',
      { text: 'GPUs', cls: 'num' }, { text: 'waited', cls: 'num' }, 'start', 'reason', 'pods → nodes'], rows)
      : el('p', { class: 'muted' }, wl.items.length ? 'No workload matches the filter.' : 'No workloads.'));
}

async function explain(w) {
  const box = document.getElementById('explain');
  box.hidden = false;
  box.replaceChildren(el('b', {}, `${w.namespace}/${w.name}`), el('span', { class: 'muted' }, ' loading…'));
  try {
    const d = await api(`/api/v1/workloads/${encodeURIComponent(w.namespace)}/${encodeURIComponent(w.name)}`);
    const x = d.explain || { reason: d.reason, expectedStart: d.expectedStart, wouldFitIf: [] };
    box.replaceChildren(el('b', {}, `${d.namespace}/${d.name}`),
        el('div', {}, 'State: ', d.state, d.clusterQueue ? ` in ${d.clusterQueue}` : ''),
        el('div', {}, 'Reason: ', x.reason || '—'),
        el('div', {}, 'Expected start: ', fmtWhen(x.expectedStart)),
        ...((x.wouldFitIf || []).length ? [el('div', {}, 'Would fit if:'),
            el('ul', {}, x.wouldFitIf.map(t => el('li', {}, t)))] : []));
  } catch (e) {
    box.replaceChildren(el('b', {}, `${w.namespace}/${w.name}`), el('div', { class: 'error' }, e.message));
  }
}

function renderGpuMap(nodes, queues) {
  const threshold = Number(document.getElementById('util-threshold').value) / 100;
  let total = 0, allocated = 0, idle = 0, unused = 0;
  const seen = new Set();
  const cards = nodes.items.map(n => {
    const slots = n.gpuSlots && n.gpuSlots.length ? n.gpuSlots
        : Array.from({ length: n.gpus || 0 }, (_, i) => ({ index: i, workload: null, clusterQueue: null, utilization: null }));
    const cells = slots.map(s => {
      total++;
      const util = s.utilization === null || s.utilization === undefined ? null : s.utilization;
      let cls = 'gpu', tip = `${n.name} GPU ${s.index}`;
      let style = null;
      if (!s.workload) {
        idle++;
        cls += ' idle';
        tip += ' · idle';
      } else {
        allocated++;
        if (s.clusterQueue) seen.add(s.clusterQueue);
        style = `background:${queueColor(s.clusterQueue)}`;
        tip += ` · ${s.workload} · ${s.clusterQueue || 'no queue'}`;
        if (util !== null && util < threshold) {
          unused++;
          cls += ' unused';
          tip += ' · allocated but unused';
        }
      }
      if (util !== null) tip += ` · ${Math.round(util * 100)}% utilized`;
      if (s.workload && s.workload === state.selected) cls += ' selected';
      return el('div', { class: cls, style, title: tip, 'data-node': n.name, 'data-index': s.index,
                         'data-workload': s.workload, 'data-queue': s.clusterQueue,
                         onclick: s.workload ? () => selectWorkload(s.workload) : null },
          s.workload && util !== null ? String(Math.round(util * 100)) : String(s.index));
    });
    const meta = [n.flavor, n.gpuModel, `${n.gpus} GPU`].filter(Boolean).join(' · ');
    return el('div', { class: `node${n.unschedulable ? ' cordoned' : ''}`, 'data-node': n.name },
        el('div', { class: 'name', title: n.name }, n.name),
        el('div', { class: 'meta' }, meta, n.unschedulable ? ' · cordoned' : ''),
        el('div', { class: 'slots' }, cells));
  });
  const legend = [...new Set([...queues.items.map(q => q.name), ...seen])].sort().map(q =>
      el('span', { 'data-queue': q }, el('span', { class: 'swatch', style: `background:${queueColor(q)}` }), q));
  legend.push(el('span', {}, el('span', { class: 'swatch', style: 'border:1px dashed #98a2b3' }), `idle (${idle})`));
  legend.push(el('span', {}, el('span', { class: 'swatch', style: 'background:#888;box-shadow:0 0 0 2px #c01048' }),
      `allocated, utilization below threshold (${unused})`));
  legend.push(el('span', { class: 'muted', id: 'gpu-counts' }, `${allocated} of ${total} GPUs allocated`));
  if (SNAPSHOT && nodes.time) {
    legend.push(el('span', { class: 'muted' }, `the cluster at ${fmtTime(nodes.time)}` +
        (nodes.total > nodes.items.length ? `; ${nodes.items.length} of ${nodes.total} nodes shown` : '')));
  }
  replace('gpu-legend', legend);
  replace('gpu-map', cards.length ? cards : el('p', { class: 'muted' }, 'No nodes with GPUs.'));
}

function selectWorkload(key) {
  state.selected = key;
  location.hash = '#workloads';
  const w = (state.data.workloads?.items || []).find(x => `${x.namespace}/${x.name}` === key);
  if (w) explain(w);
}

function costKeyName() {
  if (SNAPSHOT) return 'cluster queue';
  const by = document.getElementById('cost-by').value;
  if (by !== 'label') return by === 'cluster-queue' ? 'cluster queue' : by;
  const key = document.getElementById('cost-label').value.trim();
  return key ? `label ${key}` : 'namespace';
}

function renderCost(c) {
  const rows = [...c.rows].sort((a, b) => b.allocatedDollars - a.allocatedDollars);
  const max = Math.max(1e-9, ...rows.map(r => r.allocatedDollars), c.idle ? c.idle.dollars : 0);
  const bar = (v, idle) => el('div', { class: 'bar' },
      el('span', { class: 'used', style: `left:0;width:${100 * v / max}%${idle ? ';background:#98a2b3' : ''}` }));
  const tr = rows.map(r => el('tr', { 'data-key': r.key },
      el('td', {}, r.key), el('td', { class: 'num' }, num(r.gpuHours, 2)),
      el('td', { class: 'num' }, fmtMoney(r.allocatedDollars, c.currency)),
      el('td', { class: 'num' }, fmtMoney(r.effectiveDollars, c.currency)),
      el('td', { class: 'num' }, r.jobs), el('td', {}, bar(r.allocatedDollars))));
  if (c.idle) {
    tr.push(el('tr', { class: 'muted' }, el('td', {}, 'idle GPUs'), el('td', { class: 'num' }, num(c.idle.gpuHours, 2)),
        el('td', { class: 'num' }, fmtMoney(c.idle.dollars, c.currency)), el('td', {}, ''), el('td', {}, ''),
        el('td', {}, bar(c.idle.dollars, true))));
  }
  const total = rows.reduce((s, r) => s + r.allocatedDollars, 0);
  replace('cost', el('p', { class: 'muted' }, `${fmtTime(c.from)} – ${fmtTime(c.to)} · total allocated ` +
      `${fmtMoney(total, c.currency)} ${c.currency || ''}`),
      rows.length || c.idle ? table([costKeyName(), { text: 'GPU-hours', cls: 'num' }, { text: 'allocated $', cls: 'num' },
          { text: 'effective $', cls: 'num' }, { text: 'jobs', cls: 'num' }, ''], tr)
      : el('p', { class: 'muted' }, 'No cost recorded in this period.'));
}

// A line chart of `values` over `times` (ms), drawn as SVG elements; `second`, when given, is a
// dashed line over the same times (e.g. idle nodes under nodes up).
function lineChart(title, times, values, fmt, id, fixedMax, second) {
  const W = 420, H = 160, L = 48, R = 8, T = 8, B = 20;
  const pairs = vs => vs.map((v, i) => [times[i], v]).filter(([t, v]) => isFinite(t) && v !== null && v !== undefined && isFinite(v));
  const ok = pairs(values);
  const ok2 = second ? pairs(second) : [];
  const box = el('div', { class: 'chart', id }, el('h3', {}, title));
  const s = svg('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img' });
  if (ok.length === 0) {
    s.append(svg('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle' },
        SNAPSHOT ? 'not in this report' : 'no data yet'));
    box.append(s);
    return box;
  }
  const t0 = ok[0][0], t1 = Math.max(ok[ok.length - 1][0], t0 + 1);
  const vmax = fixedMax || Math.max(...ok.map(p => p[1]), ...ok2.map(p => p[1]), 1e-9);
  const x = t => L + (W - L - R) * (t - t0) / (t1 - t0);
  const y = v => T + (H - T - B) * (1 - v / vmax);
  // A lone sample (a run just started, one bucket) is drawn as a level line across the chart:
  // a polyline of one point shows nothing.
  const level = ps => ps.length === 1 ? [ps[0], [t1, ps[0][1]]] : ps;
  const line = level(ok), line2 = level(ok2);
  const pts = line.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`);
  s.append(svg('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }),
      svg('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B }),
      svg('text', { x: L - 4, y: T + 8, 'text-anchor': 'end' }, fmt(vmax)),
      svg('text', { x: L - 4, y: H - B, 'text-anchor': 'end' }, fmt(0)),
      svg('text', { x: L, y: H - 4 }, axisTime(t0)),
      svg('text', { x: W - R, y: H - 4, 'text-anchor': 'end' }, axisTime(t1)),
      svg('polygon', { class: 'area', points: `${x(line[0][0])},${H - B} ${pts.join(' ')} ${x(line[line.length - 1][0])},${H - B}` }),
      svg('polyline', { class: 'line', points: pts.join(' ') }));
  if (ok2.length) {
    s.append(svg('polyline', { class: 'line second', points: line2.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(' ') }));
  }
  box.append(s, el('div', { class: 'muted' }, `latest ${fmt(ok[ok.length - 1][1])}` +
      (ok2.length ? ` (dashed ${fmt(ok2[ok2.length - 1][1])})` : '')));
  return box;
}

// A report's nodes over time (trends points with nodesByPool): per NodePool, nodes up, and idle
// dashed. At most 8 pools are drawn.
function nodeCharts(pts, times) {
  const pools = [...new Set(pts.flatMap(p => Object.keys(p.nodesByPool || {})))].sort().slice(0, 8);
  return pools.map((pool, i) => lineChart(`Nodes up (idle dashed): ${pool}`, times,
      pts.map(p => p.nodesByPool?.[pool]?.up ?? null), v => num(v, 1), `chart-nodes-${i}`, 0,
      pts.map(p => p.nodesByPool?.[pool]?.idle ?? null)));
}

function renderTrends(tr) {
  const pts = tr.points || [];
  const times = pts.map(p => Date.parse(p.time));
  replace('trends',
      lineChart('GPU allocation', times, pts.map(p => p.gpuAllocation), v => `${Math.round(v * 100)}%`, 'chart-allocation', 1),
      lineChart('Wait p95', times, pts.map(p => p.waitP95Seconds), fmtDuration, 'chart-wait'),
      lineChart(`Idle node time per ${fmtDuration(tr.interval)}`, times, pts.map(p => p.idleNodeSeconds),
                fmtDuration, 'chart-idle'),
      lineChart('Pending workloads', times, pts.map(p => p.pendingWorkloads), v => num(v, 0), 'chart-pending'),
      ...nodeCharts(pts, times));
}

// ---- refresh loop ---------------------------------------------------------------------------

function setStatus(text, cls) {
  const s = document.getElementById('status');
  s.textContent = text;
  s.className = `status ${cls || ''}`;
}

function banner(text) {
  const b = document.getElementById('banner');
  b.hidden = !text;
  b.textContent = text || '';
}

function costPath() {
  const p = new URLSearchParams();
  const from = document.getElementById('cost-from').value;
  const to = document.getElementById('cost-to').value;
  const by = document.getElementById('cost-by').value;
  if (from) p.set('from', from);
  if (to) p.set('to', to);
  if (by === 'label') {
    const key = document.getElementById('cost-label').value.trim();
    if (key) p.set('by', `label:${key}`);
  } else {
    p.set('by', by);
  }
  const q = p.toString();
  return `/api/v1/cost${q ? `?${q}` : ''}`;
}

async function refresh() {
  const wanted = { summary: '/api/v1/summary', queues: '/api/v1/queues' };
  if (state.tab === 'workloads') wanted.workloads = '/api/v1/workloads';
  if (state.tab === 'gpus') wanted.nodes = '/api/v1/nodes';
  if (state.tab === 'gpus' || state.tab === 'workloads') wanted.workloads = '/api/v1/workloads';
  if (state.tab === 'cost') wanted.cost = costPath();
  if (state.tab === 'trends') wanted.trends = '/api/v1/trends';
  const keys = Object.keys(wanted);
  const results = await Promise.allSettled(keys.map(k => api(wanted[k])));
  const errors = [];
  results.forEach((r, i) => {
    if (r.status === 'fulfilled') state.data[keys[i]] = r.value;
    else errors.push([keys[i], r.reason]);
  });
  if (errors.some(([, e]) => e.status === 401)) {
    askToken(token() ? 'That token was refused.' : '');
    setStatus('needs a token', 'error');
    return;
  }
  const d = state.data;
  if (d.queues) assignQueueColors(d.queues.items);
  if (d.summary) renderSummary(d.summary);
  if (d.queues && state.tab === 'queues') renderQueues(d.queues);
  if (d.workloads && state.tab === 'workloads') renderWorkloads(d.workloads);
  if (d.nodes && d.queues && state.tab === 'gpus') renderGpuMap(d.nodes, d.queues);
  if (d.cost && state.tab === 'cost') renderCost(d.cost);
  if (d.trends && state.tab === 'trends') renderTrends(d.trends);
  if (errors.length) {
    const [k, e] = errors[0];
    banner(e.status === 503 ? 'serve has not synced its caches yet; retrying…'
                            : `${k}: ${e.message}${SNAPSHOT ? '' : '; retrying'}`);
  } else {
    banner('');
  }
  setStatus(SNAPSHOT ? 'snapshot' : `updated ${new Date().toLocaleTimeString()}`, errors.length ? 'error' : '');
}

function schedule() {
  clearTimeout(state.timer);
  if (SNAPSHOT) return;
  state.timer = setTimeout(async () => {
    try { await refresh(); } catch (e) { setStatus(String(e.message || e), 'error'); }
    schedule();
  }, POLL_MS);
}

async function refreshNow() {
  try { await refresh(); } catch (e) { setStatus(`unreachable: ${e.message || e}`, 'error'); }
  schedule();
}

function showTab() {
  const tab = (location.hash || '#queues').slice(1);
  state.tab = document.getElementById(`tab-${tab}`) ? tab : 'queues';
  for (const s of document.querySelectorAll('.tab')) s.hidden = s.id !== `tab-${state.tab}`;
  for (const a of document.querySelectorAll('#tabs a')) a.classList.toggle('active', a.dataset.tab === state.tab);
  refreshNow();
}

function askToken(message) {
  const dialog = document.getElementById('token-dialog');
  document.getElementById('token-error').textContent = message;
  if (!dialog.open) dialog.showModal();
}

function init() {
  document.getElementById('mode').textContent = SNAPSHOT ? 'simulated run' : '';
  window.addEventListener('hashchange', showTab);
  document.getElementById('token-form').addEventListener('submit', () => {
    sessionStorage.setItem(TOKEN_KEY, document.getElementById('token-input').value.trim());
    refreshNow();
  });
  for (const id of ['wl-ns', 'wl-state', 'wl-search']) {
    document.getElementById(id).addEventListener('input', () => state.data.workloads && renderWorkloads(state.data.workloads));
  }
  document.getElementById('wl-filter').addEventListener('submit', e => e.preventDefault());
  document.getElementById('util-threshold').addEventListener('input',
      () => state.data.nodes && state.data.queues && renderGpuMap(state.data.nodes, state.data.queues));
  document.getElementById('cost-by').addEventListener('change', e => {
    document.getElementById('cost-label').hidden = e.target.value !== 'label';
  });
  document.getElementById('cost-filter').addEventListener('submit', e => { e.preventDefault(); refreshNow(); });
  if (SNAPSHOT) {
    // A report has one cost period, the run; and a tab whose documents it lacks is left out.
    document.getElementById('cost-filter').hidden = true;
    const needs = { workloads: 'workloads', gpus: 'nodes', cost: 'cost', trends: 'trends' };
    for (const a of document.querySelectorAll('#tabs a')) {
      const key = needs[a.dataset.tab];
      if (key && !SNAPSHOT[key]) a.hidden = true;
    }
  }
  showTab();
}

init();
