// A benchmark peer of the jdlpack example inference server: Node's http server and onnxruntime-node,
// the same HTTP contract (docs/serving.md, "The example server"), the same model and ONNX Runtime
// options (one intra-op and one inter-op thread per session).
//
//   node server.js PORT MODEL WORKERS     # WORKERS 1: one process; N: node:cluster with N workers
//
// Each worker reads the body into one Buffer, checks and normalizes it in a Float32Array over that
// Buffer, runs the session (onnxruntime-node runs it off the event loop), and computes softmax and
// top-2 in JavaScript into a Buffer it sends.
'use strict';
const cluster = require('node:cluster');
const http = require('node:http');
const ort = require('onnxruntime-node');

const [port, model, workers] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4] || 1)];
const FEATURES = 16, CLASSES = 4, TOP = 2, MAX_ROWS = 1 << 18;
const SHAPE = /^([1-9][0-9]{0,8}),16$/;

if (workers > 1 && cluster.isPrimary) {
  for (let i = 0; i < workers; i++) cluster.fork();
  let ready = 0;
  cluster.on('message', (worker, msg) => {
    if (msg === 'listening' && ++ready === workers) console.log(`node peer server (${workers} workers) on http://127.0.0.1:${port}/classify`);
  });
  cluster.on('exit', (worker, code) => { if (code !== 0) process.exit(1); });
} else {
  main().catch((e) => { console.error(e); process.exit(1); });
}

function refuse(res, status, message) {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(message + '\n');
}

// The example server's checks, before a byte of the body is read: the rows, or a message for 400.
function rowsOf(req) {
  const raw = req.headersDistinct['x-shape'];
  if (!raw) return 'the X-Shape header is missing: send X-Shape: ROWS,16';
  const m = raw.length === 1 ? SHAPE.exec(raw[0]) : null;
  if (!m) return `X-Shape is ${raw}; send X-Shape: ROWS,16`;
  const rows = Number(m[1]);
  if (rows > MAX_ROWS) return `X-Shape asks for ${rows} rows; send 1 to ${MAX_ROWS}`;
  if (req.headers['content-length'] !== String(rows * FEATURES * 4)) {
    return `the body holds ${req.headers['content-length']} bytes; X-Shape needs ${rows * FEATURES * 4}`;
  }
  return rows;
}

function readBody(req, length) {
  return new Promise((resolve, reject) => {
    const body = Buffer.allocUnsafe(length);
    let filled = 0;
    req.on('data', (chunk) => {
      if (filled + chunk.length > length) { reject(new Error('body longer than Content-Length')); return; }
      chunk.copy(body, filled);
      filled += chunk.length;
    });
    req.on('end', () => (filled === length ? resolve(body) : reject(new Error(`the body ended after ${filled} bytes`))));
    req.on('error', reject);
  });
}

async function classify(session, req, res) {
  if (req.method !== 'POST') return refuse(res, 405, 'POST a body of float32 rows');
  const rows = rowsOf(req);
  if (typeof rows === 'string') {
    req.resume(); // drain the body so the connection stays usable
    return req.on('end', () => refuse(res, 400, rows));
  }
  let body;
  try {
    body = await readBody(req, rows * FEATURES * 4);
  } catch (e) {
    return; // the client went away mid-request
  }
  // Buffer.allocUnsafe of this size is not pooled, so it starts at offset 0: 4-byte aligned.
  const x = new Float32Array(body.buffer, body.byteOffset, rows * FEATURES);
  for (let i = 0; i < x.length; i++) {
    if (!Number.isFinite(x[i])) return refuse(res, 400, `row ${Math.floor(i / FEATURES)} holds NaN or infinity`);
  }
  for (let i = 0; i < x.length; i++) x[i] = Math.fround(Math.fround(x[i] - 0.5) / 2);
  let logits;
  try {
    const out = await session.run({ x: new ort.Tensor('float32', x, [rows, FEATURES]) });
    logits = out.logits.data;
  } catch (e) {
    return refuse(res, 500, `inference (ONNX Runtime) failed: ${e.message}`);
  }
  const answer = Buffer.allocUnsafe(rows * TOP * 8);
  const classes = new Int32Array(answer.buffer, answer.byteOffset, rows * TOP);
  const probabilities = new Float32Array(answer.buffer, answer.byteOffset + rows * TOP * 4, rows * TOP);
  const p = new Float32Array(CLASSES);
  for (let r = 0; r < rows; r++) {
    const base = r * CLASSES;
    let max = logits[base];
    for (let c = 1; c < CLASSES; c++) max = Math.max(max, logits[base + c]);
    let sum = 0;
    for (let c = 0; c < CLASSES; c++) { p[c] = Math.exp(logits[base + c] - max); sum = Math.fround(sum + p[c]); }
    let first = 0;
    for (let c = 0; c < CLASSES; c++) { p[c] = p[c] / sum; if (p[c] > p[first]) first = c; }
    let second = first === 0 ? 1 : 0;
    for (let c = 0; c < CLASSES; c++) if (c !== first && p[c] > p[second]) second = c;
    classes[r * 2] = first; classes[r * 2 + 1] = second;
    probabilities[r * 2] = p[first]; probabilities[r * 2 + 1] = p[second];
  }
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'X-Shape': `${rows},${TOP}`, 'Content-Length': answer.length });
  res.end(answer);
}

async function main() {
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 4 });
  const server = http.createServer((req, res) => {
    const path = req.url.split('?')[0];
    if (path === '/classify') return classify(session, req, res);
    refuse(res, 404, 'not found');
  });
  server.keepAliveTimeout = 60000;
  server.listen(port, '127.0.0.1', () => {
    if (cluster.isWorker) process.send('listening');
    else console.log(`node peer server (1 process) on http://127.0.0.1:${port}/classify`);
  });
}
