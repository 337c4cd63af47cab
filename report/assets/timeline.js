// The timeline of report.html, drawn on one <canvas>: lanes of client processes (or client
// nodes), a fault lane and one lane per resource key; lock holds as bars, every op as a
// mark from invoke to completion, fault windows across all lanes. Only what is inside the
// visible window is drawn, and marks that would fall on the same pixel are drawn once, so
// a history of a million events stays interactive. Inlined by report/run_report.cpp.
//
// The data (report/report_data.cpp writes it; times in microseconds, strings as ids into
// `str`, id 0 = ""):
//   ops:    [process, f, outcome (0 pending, 1 ok, 2 fail, 3 info), invoke, complete|-1,
//            invoke_index, complete_index|-1, key, node, value, error]   (in invoke order)
//   holds:  [process, key, node, start, end, ended_by (0 release, 1 retired, 2 end, 3 lost),
//            acquire_index, token|null]
//   notices: [process, f, time, key, node]     (the lock library told a process: lost)
//   faults: [fault, began_by, ended_by, start, end, open_at_end, targets, value,
//            start_index, end_index|null]
//   marks:  [time, f, value, index]            (instant nemesis lines: arm, restart, …)
//   res:    [seq, time, key, op (0 read, 1 write, 2 cas), token|null, accepted, client,
//            reason, value]
//   viol:   [{c: checker, n, msg, from, to, p: processes, i: indices, ci: context
//            indices, s: resource seqs, lin: the linearizability violation, if one,
//            b: exclusion's blame {cls, told, lg: later grant, pe: promised end|absent,
//            ha: the overlapped hold's acquire index}, if one}]
'use strict';

const FC_OUT = ['pending', 'ok', 'fail', 'info'];
const FC_OUT_COLOR = ['#8e44ad', '#2e9d4a', '#9aa0a6', '#e8891c'];
const FC_FAULT_COLOR = { pause: '#ffd3d3', partition: '#ffe3a8', 'clock-bump': '#e2d6ff',
                         'clock-strobe': '#e2d6ff', kill: '#cfe2ff' };
const FC_HI = '#d0006f';

function fcSeconds(us) { return (us / 1e6).toFixed(3) + ' s'; }

// Index of the first element of sorted `a` whose key(x) >= v.
function fcLowerBound(a, v, key) {
  let lo = 0, hi = a.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (key(a[m]) < v) lo = m + 1; else hi = m; }
  return lo;
}

class FcTimeline {
  constructor(canvas, data) {
    this.c = canvas; this.D = data; this.S = data.str;
    this.LANE = 20; this.AXIS = 26; this.LABEL = 120;
    this.hi = null;  // the focused violation's sets
    this.full = [data.start, Math.max(data.end, data.start + 1)];
    this.view = this.full.slice();
    const processes = new Set(data.ops.map(o => o[0]));
    this.mode = processes.size <= 60 ? 'process' : 'node';
    // One lane per lock's keys: lock-append moves a lock's clients from k0 to k0.1, k0.2 …
    // once a key is full, and those keys share one lane, named by the first ("k0 …").
    this.res = new Map();  // lane name -> its entries, in time order
    this.resMany = new Set();  // lanes of more than one key
    data.res.forEach((r, k) => {
      const key = data.str[r[2]], lane = key.split('.')[0];
      if (!this.res.has(lane)) this.res.set(lane, []);
      if (key !== lane) this.resMany.add(lane);
      this.res.get(lane).push(k);
    });
    if (this.res.size > 16) this.res = new Map([['', data.res.map((r, k) => k)]]);  // one lane for all keys
    for (const list of this.res.values()) list.sort((a, b) => data.res[a][1] - data.res[b][1]);
    this.resKeys = [...this.res.keys()].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    this.buildLanes();
    this.bind();
  }

  // Client lanes for the current mode; each keeps its ops and holds in time order and the
  // longest op, so a window can start its scan at a binary search.
  buildLanes() {
    const D = this.D, S = this.S, byId = new Map();
    const lane = (id, label, sort) => {
      if (!byId.has(id)) byId.set(id, { id, label, sort, ops: [], holds: [], notices: [], maxDur: 0 });
      return byId.get(id);
    };
    const nodeOf = new Map();
    for (const o of D.ops) if (!nodeOf.has(o[0])) nodeOf.set(o[0], o[8]);
    for (let k = 0; k < D.ops.length; k++) {
      const o = D.ops[k];
      const l = this.mode === 'process'
        ? lane('p' + o[0], (S[o[8]] ? S[o[8]] + ' · ' : '') + 'p' + o[0], [S[o[8]], o[0]])
        : lane('n' + o[8], S[o[8]] || 'no node', [S[o[8]], 0]);
      l.ops.push(k);
      const end = o[4] < 0 ? D.end : o[4];
      if (end - o[3] > l.maxDur) l.maxDur = end - o[3];
    }
    for (let k = 0; k < D.holds.length; k++) {
      const h = D.holds[k];
      const id = this.mode === 'process' ? 'p' + h[0] : 'n' + (h[2] || nodeOf.get(h[0]) || 0);
      const l = byId.get(id);
      if (!l) continue;  // every hold comes from an op of its lane
      l.holds.push(k);
      if (h[4] - h[3] > l.maxDur) l.maxDur = h[4] - h[3];
    }
    (D.notices || []).forEach((n, k) => {
      const l = byId.get(this.mode === 'process' ? 'p' + n[0] : 'n' + (n[4] || nodeOf.get(n[0]) || 0));
      if (l) l.notices.push(k);
    });
    this.lanes = [...byId.values()].sort((a, b) =>
      a.sort[0] < b.sort[0] ? -1 : a.sort[0] > b.sort[0] ? 1 : a.sort[1] - b.sort[1]);
    this.top = this.AXIS + this.LANE * (1 + this.resKeys.length);  // fault lane, resource lanes
    const h = this.top + this.LANE * this.lanes.length + 6;
    this.cssH = h;
    this.resize();
  }

  resize() {
    const r = window.devicePixelRatio || 1, w = Math.max(400, this.c.parentElement.clientWidth || 1200);
    this.cssW = w;
    this.c.width = Math.round(w * r); this.c.height = Math.round(this.cssH * r);
    this.c.style.height = this.cssH + 'px';
    this.ctx = this.c.getContext('2d');
    this.ctx.setTransform(r, 0, 0, r, 0, 0);
  }

  x(t) { return this.LABEL + (t - this.view[0]) / (this.view[1] - this.view[0]) * (this.cssW - this.LABEL - 8); }
  t(x) { return this.view[0] + (x - this.LABEL) / (this.cssW - this.LABEL - 8) * (this.view[1] - this.view[0]); }
  clip(x) { return Math.max(this.LABEL, Math.min(this.cssW - 8, x)); }

  setView(a, b) {
    const min = 20;  // µs
    if (b - a < min) { const m = (a + b) / 2; a = m - min / 2; b = m + min / 2; }
    this.view = [a, b];
    this.draw();
  }

  focus(v) {
    const pad = Math.max((v.to - v.from) * 0.25, 50000);
    this.hi = { p: new Set(v.p), i: new Set(v.i), ci: new Set(v.ci), s: new Set(v.s), b: v.b || null };
    delete this.c.dataset.promisedEnd;
    this.setView(v.from - pad, v.to + pad);
  }

  draw() {
    const t0 = performance.now(), g = this.ctx, D = this.D, S = this.S;
    g.clearRect(0, 0, this.cssW, this.cssH);
    g.font = '11px system-ui, sans-serif'; g.textBaseline = 'middle';
    this.drawAxis(g);
    let drawn = 0;
    for (const f of D.faults) {  // windows across every lane
      if (f[4] < this.view[0] || f[3] > this.view[1]) continue;
      const x0 = this.clip(this.x(f[3])), x1 = this.clip(this.x(f[4]));
      g.fillStyle = FC_FAULT_COLOR[S[f[1]]] || '#e5e7eb';
      g.globalAlpha = 0.55; g.fillRect(x0, this.AXIS, Math.max(1, x1 - x0), this.cssH - this.AXIS); g.globalAlpha = 1;
      g.fillStyle = '#7f1d1d';
      g.fillText(S[f[0]] + (S[f[6]] ? ' ' + S[f[6]] : '') + (f[5] ? ' (open at end)' : ''), x0 + 3, this.AXIS + this.LANE / 2);
    }
    g.strokeStyle = '#6b7280';
    for (const m of D.marks) {
      if (m[0] < this.view[0] || m[0] > this.view[1]) continue;
      const x = this.x(m[0]); g.beginPath(); g.moveTo(x, this.AXIS + 2); g.lineTo(x, this.AXIS + this.LANE - 2); g.stroke();
    }
    this.label(g, 0, 'faults');
    this.resKeys.forEach((key, k) => { this.label(g, 1 + k, key === '' ? 'resource (all keys)' : 'resource ' + key + (this.resMany.has(key) ? ' …' : '')); drawn += this.drawResource(g, key, 1 + k); });
    this.lanes.forEach((l, k) => { this.label(g, 1 + this.resKeys.length + k, l.label); drawn += this.drawLane(g, l, this.top + k * this.LANE); });
    this.c.dataset.drawnMarks = String(drawn);
    this.c.dataset.lanes = String(this.lanes.length);
    this.c.dataset.drawn = '1';
    this.lastDrawMs = performance.now() - t0;
  }

  drawAxis(g) {
    const span = this.view[1] - this.view[0], target = span / 10;
    let step = Math.pow(10, Math.floor(Math.log10(target)));
    if (target / step > 5) step *= 5; else if (target / step > 2) step *= 2;
    g.fillStyle = '#374151'; g.strokeStyle = '#eef0f3';
    for (let t = Math.ceil(this.view[0] / step) * step; t <= this.view[1]; t += step) {
      const x = this.x(t);
      g.beginPath(); g.moveTo(x, this.AXIS - 4); g.lineTo(x, this.cssH); g.stroke();
      g.fillText(step >= 1e6 ? (t / 1e6).toFixed(0) + ' s' : step >= 1e3 ? (t / 1e6).toFixed(3) + ' s' : (t / 1e6).toFixed(6) + ' s', x + 2, 10);
    }
  }

  label(g, row, text) {
    const y = this.AXIS + row * this.LANE;
    g.fillStyle = row % 2 ? '#fafafa' : '#fff'; g.fillRect(0, y, this.LABEL - 4, this.LANE);
    g.fillStyle = '#374151'; g.fillText(text.length > 18 ? text.slice(0, 17) + '…' : text, 4, y + this.LANE / 2);
    g.strokeStyle = '#f1f1f1'; g.beginPath(); g.moveTo(this.LABEL, y + this.LANE); g.lineTo(this.cssW, y + this.LANE); g.stroke();
  }

  // Resource log entries of one key: accepted reads light, writes dark, refused red;
  // entries a violation names in magenta.
  drawResource(g, key, row) {
    const D = this.D, y = this.AXIS + row * this.LANE;
    const list = this.res.get(key);
    let lastPx = -1, lastKind = -1, n = 0;
    for (let k = fcLowerBound(list, this.view[0], e => D.res[e][1]); k < list.length; k++) {
      const r = D.res[list[k]];
      if (r[1] > this.view[1]) break;
      const hi = this.hi && this.hi.s.has(r[0]);
      const kind = hi ? 3 : !r[5] ? 2 : r[3] === 0 ? 0 : 1, x = Math.round(this.x(r[1]));
      if (x === lastPx && kind === lastKind) continue;
      lastPx = x; lastKind = kind; n++;
      g.fillStyle = ['#9ca3af', '#1f2937', '#c62828', FC_HI][kind];
      const h = kind === 0 ? 6 : 10;
      g.fillRect(x - (hi ? 2 : 0.5), y + (this.LANE - h) / 2, hi ? 4 : 1.5, h);
    }
    return n;
  }

  // The overlapped hold's promised end (exclusion's blame): a dashed line on its lane,
  // labelled with the violation's class. data-promised-end says where it was drawn.
  drawPromiseEnd(g, b, y) {
    const x = this.x(b.pe);
    this.c.dataset.promisedEnd = String(b.pe);
    if (x < this.LABEL || x > this.cssW) return;
    g.strokeStyle = '#111827'; g.setLineDash([3, 2]);
    g.beginPath(); g.moveTo(x, y); g.lineTo(x, y + this.LANE); g.stroke(); g.setLineDash([]);
    g.fillStyle = '#111827'; g.fillText('promised end · ' + b.cls, x + 3, y + 6);
  }

  drawLane(g, l, y) {
    const D = this.D, v0 = this.view[0] - l.maxDur, v1 = this.view[1], hi = this.hi;
    let n = 0;
    let k = fcLowerBound(l.holds, v0, h => D.holds[h][3]);
    for (; k < l.holds.length; k++) {
      const h = D.holds[l.holds[k]];
      if (h[3] > v1) break;
      if (h[4] < this.view[0]) continue;
      const x0 = this.clip(this.x(h[3])), x1 = this.clip(this.x(h[4]));
      const lit = hi && hi.i.has(h[6]);
      g.fillStyle = lit ? '#f9a8d4' : '#bfdbfe';
      g.fillRect(x0, y + 3, Math.max(1, x1 - x0), this.LANE - 8);
      if (lit) { g.strokeStyle = FC_HI; g.lineWidth = 2; g.strokeRect(x0, y + 3, Math.max(1, x1 - x0), this.LANE - 8); g.lineWidth = 1; }
      if (lit && hi.b && hi.b.pe !== undefined && h[6] === hi.b.ha) this.drawPromiseEnd(g, hi.b, y);
      n++;
    }
    g.fillStyle = '#b91c1c';  // notices: a red triangle above the lane at the instant
    for (const j of l.notices) {
      const nt = D.notices[j];
      if (nt[2] < this.view[0] || nt[2] > v1) continue;
      const x = this.x(nt[2]);
      g.beginPath(); g.moveTo(x - 4, y + 1); g.lineTo(x + 4, y + 1); g.lineTo(x, y + 8); g.fill();
      n++;
    }
    let lastPx = -1, lastOut = -1;
    k = fcLowerBound(l.ops, v0, o => D.ops[o][3]);
    for (; k < l.ops.length; k++) {
      const o = D.ops[l.ops[k]];
      if (o[3] > v1) break;
      const end = o[4] < 0 ? D.end : o[4];
      if (end < this.view[0]) continue;
      const x0 = this.x(o[3]), x1 = this.x(end);
      const lit = hi && (hi.i.has(o[5]) || hi.i.has(o[6])), ctx = hi && !lit && (hi.ci.has(o[5]) || hi.ci.has(o[6]));
      if (!lit && !ctx && x1 - x0 < 1 && Math.round(x1) === lastPx && o[2] === lastOut) continue;
      lastPx = Math.round(x1); lastOut = o[2]; n++;
      const ym = y + this.LANE - 5;
      g.fillStyle = FC_OUT_COLOR[o[2]];
      g.fillRect(this.clip(x0), ym - 1, Math.max(1, this.clip(x1) - this.clip(x0)), 2);
      if (x1 >= this.LABEL) g.fillRect(this.clip(x1) - 1.5, ym - 3, 3, 6);
      if (lit || ctx) {
        g.strokeStyle = lit ? FC_HI : '#2e9d4a'; g.lineWidth = 2;
        g.strokeRect(this.clip(x0) - 3, y + 1, Math.max(6, this.clip(x1) - this.clip(x0) + 6), this.LANE - 2);
        g.lineWidth = 1;
      }
    }
    return n;
  }

  // What is under (x, y), as text for the tooltip; '' for nothing.
  describe(x, y) {
    const D = this.D, S = this.S, row = Math.floor((y - this.AXIS) / this.LANE), tol = 4 * (this.view[1] - this.view[0]) / this.cssW;
    const t = this.t(x);
    if (x < this.LABEL || row < 0) return '';
    if (row === 0) {
      const f = D.faults.find(f => f[3] - tol <= t && t <= f[4] + tol);
      if (f) return S[f[0]] + ' (' + S[f[1]] + ' → ' + (f[5] ? 'open at end' : S[f[2]]) + ')\n' + fcSeconds(f[3]) + ' – ' + fcSeconds(f[4]) + '\n' + S[f[7]];
      const m = D.marks.find(m => Math.abs(m[0] - t) <= tol);
      return m ? S[m[1]] + ' at ' + fcSeconds(m[0]) + ' (index ' + m[3] + ')\n' + S[m[2]] : '';
    }
    if (row <= this.resKeys.length) {
      const key = this.resKeys[row - 1];
      const list = this.res.get(key), k = fcLowerBound(list, t - tol, e => D.res[e][1]);
      const r = k < list.length && D.res[list[k]][1] <= t + tol ? D.res[list[k]] : null;
      return r ? 'resource seq ' + r[0] + ': ' + ['read', 'write', 'cas'][r[3]] + ' of ' + S[r[2]] + ' token ' + r[4] + ' from ' + S[r[6]] +
        ' at ' + fcSeconds(r[1]) + (r[5] ? ' accepted' : ' refused: ' + S[r[7]]) + '\n' + S[r[8]] : '';
    }
    const l = this.lanes[row - 1 - this.resKeys.length];
    if (!l) return '';
    let best = null;
    for (let k = fcLowerBound(l.ops, t - l.maxDur - tol, o => D.ops[o][3]); k < l.ops.length; k++) {
      const o = D.ops[l.ops[k]];
      if (o[3] > t + tol) break;
      const end = o[4] < 0 ? D.end : o[4];
      if (o[3] - tol <= t && t <= end + tol) best = o;
    }
    if (best) {
      const o = best;
      return D.fn[o[1]] + ' ' + S[o[7]] + ' → ' + FC_OUT[o[2]] + ' (process ' + o[0] + (S[o[8]] ? ', ' + S[o[8]] : '') + ')\n' +
        'invoke ' + fcSeconds(o[3]) + ' [' + o[5] + ']' + (o[4] < 0 ? ', never completed' : ', complete ' + fcSeconds(o[4]) + ' [' + o[6] + ']') +
        '\nvalue ' + S[o[9]] + (S[o[10]] ? '\nerror ' + S[o[10]] : '');
    }
    const h = l.holds.map(k => D.holds[k]).find(h => h[3] <= t && t <= h[4]);
    return h ? 'hold of ' + S[h[1]] + ' by process ' + h[0] + ' token ' + h[7] + '\n' + fcSeconds(h[3]) + ' – ' + fcSeconds(h[4]) +
      ' (' + ['released', 'retired', 'end of history'][h[5]] + ')' : '';
  }

  bind() {
    const c = this.c, tip = document.getElementById('tl-tip');
    let drag = null;
    c.addEventListener('wheel', e => {
      e.preventDefault();
      const r = c.getBoundingClientRect(), t = this.t(e.clientX - r.left), k = e.deltaY > 0 ? 1.25 : 0.8;
      this.setView(t - (t - this.view[0]) * k, t + (this.view[1] - t) * k);
    }, { passive: false });
    c.addEventListener('mousedown', e => { drag = { x: e.clientX, v: this.view.slice() }; c.style.cursor = 'grabbing'; });
    window.addEventListener('mouseup', () => { drag = null; c.style.cursor = 'grab'; });
    c.addEventListener('mousemove', e => {
      const r = c.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
      if (drag) {
        const dt = (e.clientX - drag.x) / (this.cssW - this.LABEL - 8) * (drag.v[1] - drag.v[0]);
        this.view = [drag.v[0] - dt, drag.v[1] - dt]; this.draw(); return;
      }
      const text = this.describe(x, y);
      tip.style.display = text ? 'block' : 'none';
      if (text) { tip.textContent = text; tip.style.left = Math.min(x + 14, this.cssW - 300) + 'px'; tip.style.top = (y + 16) + 'px'; }
    });
    c.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
    c.addEventListener('dblclick', () => this.setView(this.full[0], this.full[1]));
    window.addEventListener('resize', () => { this.resize(); this.draw(); });
  }
}
