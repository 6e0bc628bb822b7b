// The cohort dashboard: polls GET /v1/cluster about once a second and draws the cluster
// (nodes with memory bars, links with measured RTT and bandwidth), the placement, live
// figures and warnings; the chat box streams from POST /v1/chat/completions (SSE). Plain
// JS and SVG, nothing fetched but this server's own endpoints.
'use strict';

const SVG_NS = 'http://www.w3.org/2000/svg';
const COLORS = ['#4fb3ff', '#3fbf7f', '#f0b429', '#c77dff', '#ef5b5b', '#2ec4b6', '#ff9f68'];
const keyMatch = /(?:^|[#&])key=([^&]+)/.exec(location.hash);
const apiKey = keyMatch ? decodeURIComponent(keyMatch[1]) : '';
let modelName = '';

function headers(extra) {
  const h = Object.assign({}, extra || {});
  if (apiKey) h['Authorization'] = 'Bearer ' + apiKey;
  return h;
}

function el(tag, attrs, text) {
  const e = tag.startsWith('svg:') ? document.createElementNS(SVG_NS, tag.slice(4))
                                   : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function mib(bytes) {
  if (bytes >= 1 << 30) return (bytes / (1 << 30)).toFixed(1) + ' GiB';
  return (bytes / (1 << 20)).toFixed(bytes < 10 << 20 ? 2 : 0) + ' MiB';
}
function rate(bps) {
  return bps >= 1e9 ? (bps / 1e9).toFixed(2) + ' GB/s' : (bps / 1e6).toFixed(0) + ' MB/s';
}
function rtt(us) { return us >= 1000 ? (us / 1000).toFixed(1) + ' ms' : us.toFixed(0) + ' µs'; }
function range(r) {
  if (r[1] <= r[0]) return 'none';
  return r[1] === r[0] + 1 ? String(r[0]) : r[0] + '–' + (r[1] - 1);
}

function drawCluster(c) {
  const svg = document.getElementById('cluster');
  svg.replaceChildren();
  const nodes = c.nodes.length ? c.nodes : [{ name: 'this node', role: 'head', free_bytes: 0,
    total_bytes: 0, used_bytes: 0, layers: [0, 0], heads: [0, 0] }];
  const W = 720, H = 360, cx = W / 2, cy = H / 2, R = nodes.length > 1 ? 125 : 0;
  const pos = nodes.map((_, i) => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / nodes.length;
    return [cx + 1.9 * R * Math.cos(a), cy + R * Math.sin(a)];
  });
  const links = el('svg:g', { id: 'links' });
  for (const l of c.links) {
    const [x1, y1] = pos[l.a], [x2, y2] = pos[l.b];
    const g = el('svg:g', { class: 'link' + (l.slow ? ' slow' : ''),
                            'data-a': nodes[l.a].name, 'data-b': nodes[l.b].name });
    g.appendChild(el('svg:line', { x1, y1, x2, y2 }));
    const label = l.rtt_us > 0 ? rtt(l.rtt_us) + ' · ' + rate(l.bandwidth_bytes_per_s)
                               : 'not measured';
    g.appendChild(el('svg:text', { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 4,
                                   'text-anchor': 'middle' }, label));
    links.appendChild(g);
  }
  svg.appendChild(links);
  const group = el('svg:g', { id: 'nodes' });
  nodes.forEach((n, i) => {
    const [x, y] = pos[i], w = 190, h = 74;
    const g = el('svg:g', { class: 'node ' + n.role, 'data-name': n.name,
                            transform: `translate(${x - w / 2},${y - h / 2})` });
    g.appendChild(el('svg:rect', { class: 'box', width: w, height: h, rx: 8 }));
    g.appendChild(el('svg:text', { x: 10, y: 18 }, n.name + (n.role === 'head' ? ' (head)' : '')));
    g.appendChild(el('svg:text', { class: 'sub', x: 10, y: 34 },
                     'layers ' + range(n.layers) + ' · heads ' + range(n.heads)));
    const total = Math.max(n.free_bytes, n.used_bytes, 1);
    g.appendChild(el('svg:rect', { class: 'bar-bg', x: 10, y: 44, width: w - 20, height: 9, rx: 3 }));
    g.appendChild(el('svg:rect', { class: 'bar-used', x: 10, y: 44, height: 9, rx: 3,
                                   width: Math.max(2, (w - 20) * n.used_bytes / total) }));
    g.appendChild(el('svg:text', { class: 'sub', x: 10, y: 67 },
                     mib(n.used_bytes) + ' placed / ' + mib(n.free_bytes) + ' free'));
    group.appendChild(g);
  });
  svg.appendChild(group);
}

function drawPlacement(c) {
  const box = document.getElementById('placement');
  box.replaceChildren();
  if (!c.nodes.length) {
    box.appendChild(el('p', { class: 'muted' }, 'The whole model runs on this node.'));
    return;
  }
  const strip = el('div', { class: 'strip', title: 'layers by node' });
  const n = Math.max(c.n_layers, 1);
  c.nodes.forEach((node, i) => {
    const share = (node.layers[1] - node.layers[0]) / n;
    if (share > 0 && c.mode !== 'tensor') {
      strip.appendChild(el('div', { style: `width:${100 * share}%;background:${COLORS[i % 7]}`,
                                    title: node.name }));
    }
  });
  if (c.mode !== 'tensor') box.appendChild(strip);
  const table = el('table', { id: 'placement-table' });
  const head = el('tr');
  for (const t of ['node', 'stage', 'layers', 'heads', 'embeds', 'outputs', 'placed']) {
    head.appendChild(el('th', {}, t));
  }
  table.appendChild(head);
  c.nodes.forEach((node, i) => {
    const tr = el('tr', { 'data-name': node.name });
    const name = el('td');
    name.appendChild(el('span', { style: `color:${COLORS[i % 7]}` }, '■ '));
    name.appendChild(document.createTextNode(node.name));
    tr.appendChild(name);
    for (const v of [node.stage, range(node.layers), range(node.heads),
                     node.embeds ? 'yes' : '', node.outputs ? 'yes' : '', mib(node.used_bytes)]) {
      tr.appendChild(el('td', {}, String(v)));
    }
    table.appendChild(tr);
  });
  box.appendChild(table);
}

function drawWarnings(status) {
  const list = document.getElementById('warnings');
  const items = [];
  const st = status.cluster.state || '';
  if (st.startsWith('broken') || st.startsWith('no placement')) items.push(['bad', st]);
  for (const l of status.cluster.links) {
    if (l.slow) {
      items.push(['warn', 'slow link ' + status.cluster.nodes[l.a].name + ' ↔ ' +
                          status.cluster.nodes[l.b].name + ': ' + rtt(l.rtt_us)]);
    }
  }
  for (const w of status.warnings.slice().reverse()) {
    const when = new Date(w.unix_ms).toLocaleTimeString();
    items.push([w.kind === 'replaced' ? '' : 'warn', when + ' ' + w.kind + ': ' + w.message]);
  }
  list.replaceChildren();
  if (!items.length) list.appendChild(el('li', { class: 'muted' }, 'none'));
  for (const [cls, text] of items) list.appendChild(el('li', { class: cls }, text));
}

function drawStats(s) {
  document.getElementById('stat-tps').textContent = s.tokens_per_s.toFixed(1);
  document.getElementById('stat-queue').textContent = s.queue_depth;
  document.getElementById('stat-slots').textContent = s.active_slots + ' / ' + s.n_slots;
  document.getElementById('stat-requests').textContent = s.requests_total;
  document.getElementById('stat-tokens').textContent = s.generated_tokens;
}

async function poll() {
  try {
    const r = await fetch('/v1/cluster', { headers: headers(), cache: 'no-store' });
    if (!r.ok) throw new Error('GET /v1/cluster: HTTP ' + r.status);
    const status = await r.json();
    modelName = status.model;
    document.getElementById('model').textContent = status.model + ' · ' + status.summary;
    const state = document.getElementById('state');
    state.textContent = status.cluster.clustered ? status.cluster.nodes.length + ' nodes, ' +
                                                   status.cluster.state : status.cluster.state;
    state.className = 'pill ' + (/^(broken|no placement)/.test(status.cluster.state) ? 'bad' : 'ok');
    document.getElementById('mode').textContent = status.cluster.clustered
        ? status.cluster.mode + ' over ' + status.cluster.transport : '';
    document.getElementById('why').textContent = status.cluster.why;
    drawStats(status.stats);
    drawCluster(status.cluster);
    drawPlacement(status.cluster);
    drawWarnings(status);
  } catch (e) {
    const state = document.getElementById('state');
    state.textContent = 'head unreachable';
    state.className = 'pill bad';
  }
  setTimeout(poll, 1000);
}

// Reads an SSE body and calls onData with each event's data (the text after "data:").
async function readSse(body, onData) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffered.indexOf('\n\n')) >= 0) {
      const event = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      const data = event.split('\n').filter(l => l.startsWith('data:'))
                        .map(l => l.slice(5).trimStart()).join('\n');
      if (data) onData(data);
    }
  }
}

async function chat(ev) {
  ev.preventDefault();
  const input = document.getElementById('chat-input');
  const send = document.getElementById('chat-send');
  const out = document.getElementById('chat-output');
  const meta = document.getElementById('chat-meta');
  const text = input.value.trim();
  if (!text) return;
  out.appendChild(el('div', { class: 'you' }, '> ' + text));
  const answer = el('div', { class: 'answer' }, '');
  out.appendChild(answer);
  send.disabled = true;
  meta.textContent = 'generating…';
  const t0 = performance.now();
  let pieces = 0;
  let tokens = 0;
  try {
    const r = await fetch('/v1/chat/completions', {
      method: 'POST',
      headers: headers({ 'Content-Type': 'application/json' }),
      body: JSON.stringify({ model: modelName, stream: true, max_tokens: 96,
                             stream_options: { include_usage: true },
                             messages: [{ role: 'user', content: text }] }),
    });
    if (!r.ok) throw new Error('HTTP ' + r.status + ': ' + await r.text());
    await readSse(r.body, data => {
      if (data === '[DONE]') return;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(chunk.error.message || JSON.stringify(chunk.error));
      if (chunk.usage) tokens = chunk.usage.completion_tokens;
      const delta = chunk.choices && chunk.choices[0] && chunk.choices[0].delta;
      if (delta && delta.content) {
        answer.textContent += delta.content;
        pieces++;
        out.scrollTop = out.scrollHeight;
      }
    });
    const s = (performance.now() - t0) / 1000;
    const rateText = tokens && s > 0 ? `, ${tokens} tokens, ${(tokens / s).toFixed(1)} tok/s` : '';
    meta.textContent = `done: ${pieces} pieces in ${s.toFixed(2)} s${rateText}`;
    answer.setAttribute('data-done', 'true');
  } catch (e) {
    answer.textContent += ' [error: ' + e.message + ']';
    meta.textContent = 'failed';
  } finally {
    send.disabled = false;
  }
}

document.getElementById('chat-form').addEventListener('submit', chat);
poll();
