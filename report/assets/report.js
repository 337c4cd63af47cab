// The page script of report.html: draws the timeline (timeline.js, inlined before this),
// links every listed violation to the spans it names, draws the linearizability
// explanations, and says what it drew in #fc-status and in data attributes (data-drawn,
// data-js-violations, data-render-ms) that tests read from the DOM. Inlined by
// report/run_report.cpp.
'use strict';

// The ops of one linearizability explanation on a small canvas: the end of the longest
// linearizable prefix in green, the op that could not be placed in red, ops concurrent
// with it in orange; one row per process.
function fcDrawExplanation(canvas, v) {
  const ops = [];
  for (const o of v.prefix_tail || []) ops.push([o, '#2e9d4a']);
  if (v.op) ops.push([v.op, '#c62828']);
  for (const o of v.concurrent || []) ops.push([o, o.in_prefix ? '#2e9d4a' : '#e8891c']);
  const procs = [...new Set(ops.map(([o]) => o.process))].sort((a, b) => a - b);
  const ROW = 22, TOP = 18, LEFT = 90;
  canvas.height = TOP + ROW * procs.length + 8;
  const g = canvas.getContext('2d'), W = canvas.width;
  let t0 = Infinity, t1 = -Infinity;
  for (const [o] of ops) {
    t0 = Math.min(t0, o.invoke_time);
    t1 = Math.max(t1, o.complete_time == null ? o.invoke_time : o.complete_time);
  }
  const span = Math.max(1, t1 - t0), pad = span * 0.05;
  const x = t => LEFT + (t - t0 + pad) / (span + 2 * pad) * (W - LEFT - 10);
  g.font = '11px system-ui, sans-serif'; g.textBaseline = 'middle';
  g.fillStyle = '#374151';
  g.fillText(fcSeconds(t0 / 1000), LEFT, 8); g.fillText(fcSeconds(t1 / 1000), W - 70, 8);
  procs.forEach((p, k) => g.fillText('process ' + p, 4, TOP + k * ROW + ROW / 2));
  const labelEnd = procs.map(() => -Infinity);  // per row: where the last label ended
  for (const [o, color] of ops) {
    const row = procs.indexOf(o.process), y = TOP + row * ROW + 3;
    const end = o.complete_time == null ? t1 + pad : o.complete_time;
    const x0 = x(o.invoke_time), w = Math.max(3, x(end) - x0);
    g.fillStyle = color; g.globalAlpha = 0.8; g.fillRect(x0, y, w, ROW - 6); g.globalAlpha = 1;
    const text = o.f + (o.token != null ? ' ' + o.token : ''), at = x0 + w + 3;
    if (at < labelEnd[row]) continue;  // crowded: the table below names every op
    g.fillStyle = '#111827';
    g.fillText(text, at, y + (ROW - 6) / 2);
    labelEnd[row] = at + g.measureText(text).width + 6;
  }
  canvas.dataset.drawn = String(ops.length);
}

(function () {
  const status = document.getElementById('fc-status');
  try {
    const t0 = performance.now();
    const data = JSON.parse(document.getElementById('fc-data').textContent);
    const canvas = document.getElementById('timeline-canvas');
    const tl = new FcTimeline(canvas, data);
    tl.draw();
    window.fcTimeline = tl;  // for a reader's console, and the browser tests
    const items = document.querySelectorAll('#violations li[data-v]');
    const focusLine = document.getElementById('tl-focus');
    const show = (li, scroll) => {
      const v = data.viol[Number(li.dataset.v)];
      items.forEach(x => x.classList.remove('active'));
      li.classList.add('active');
      tl.focus(v);
      if (scroll) document.getElementById('timeline').scrollIntoView({ behavior: 'smooth' });
      status.textContent = 'showing ' + v.c + ' violation ' + (v.n + 1) + ': ' + fcSeconds(v.from) + ' – ' + fcSeconds(v.to);
      focusLine.textContent = v.c + ': ' + v.msg;
      focusLine.style.display = 'block';

      try { history.replaceState(null, '', '#v' + li.dataset.v); } catch (e) { /* an opaque file: origin may refuse */ }
    };
    items.forEach(li => {
      if (!data.viol[Number(li.dataset.v)]) return;
      li.querySelector('a').addEventListener('click', e => { e.preventDefault(); show(li, true); });
    });
    document.getElementById('violations').dataset.jsViolations = String(items.length);
    document.querySelectorAll('canvas.lin[data-v]').forEach(c => {
      const v = data.viol[Number(c.dataset.v)];
      if (v && v.lin) fcDrawExplanation(c, v.lin);
    });
    const tool = (id, f) => { const b = document.getElementById(id); if (b) b.addEventListener('click', f); };
    const zoom = k => { const m = (tl.view[0] + tl.view[1]) / 2, h = (tl.view[1] - tl.view[0]) * k / 2; tl.setView(m - h, m + h); };
    tool('tl-reset', () => {
      tl.hi = null; items.forEach(x => x.classList.remove('active')); focusLine.style.display = 'none';
      tl.setView(tl.full[0], tl.full[1]);
    });
    tool('tl-in', () => zoom(0.5));
    tool('tl-out', () => zoom(2));
    tool('tl-mode', () => {
      const processes = new Set(data.ops.map(o => o[0])).size;
      if (tl.mode === 'node' && processes > 300) { status.textContent = processes + ' processes: too many lanes, staying per node'; return; }
      tl.mode = tl.mode === 'process' ? 'node' : 'process'; tl.buildLanes(); tl.draw();
    });
    const linked = /^#v(\d+)$/.exec(location.hash);  // report.html#v3: open on violation 3
    const ms = performance.now() - t0;
    document.body.dataset.renderMs = ms.toFixed(1);
    document.body.dataset.rendered = '1';
    status.textContent = data.ops.length + ' ops, ' + data.holds.length + ' holds, ' + data.faults.length +
      ' fault windows, ' + data.viol.length + ' violations · drawn in ' + ms.toFixed(0) + ' ms · wheel: zoom, drag: pan, double-click: all';
    const start = linked && document.querySelector('#violations li[data-v="' + linked[1] + '"]');
    if (start && data.viol[Number(linked[1])]) show(start, false);
  } catch (e) {
    status.textContent = 'the timeline could not be drawn: ' + e;
    status.className = 'error';
    document.body.dataset.renderError = String(e);
  }
})();
