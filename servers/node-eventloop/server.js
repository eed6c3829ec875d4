// node-eventloop: Node.js's built-in http module, one process, one event loop,
// no framework and no npm packages (see README.md and ../CONTRACT.md).
'use strict';

const http = require('http');

const SERVER_NAME = 'node-eventloop';
const USERS = [
  [1, 'Ada Lovelace', 'ada.lovelace@example.com', 36, true],
  [2, 'Alan Turing', 'alan.turing@example.com', 41, true],
  [3, 'Grace Hopper', 'grace.hopper@example.com', 85, false],
  [4, 'Edsger Dijkstra', 'edsger.dijkstra@example.com', 72, true],
  [5, 'Barbara Liskov', 'barbara.liskov@example.com', 86, true],
  [6, 'Donald Knuth', 'donald.knuth@example.com', 88, false],
  [7, 'Margaret Hamilton', 'margaret.hamilton@example.com', 90, true],
  [8, 'Ken Thompson', 'ken.thompson@example.com', 83, true],
  [9, 'Frances Allen', 'frances.allen@example.com', 88, false],
  [10, 'Dennis Ritchie', 'dennis.ritchie@example.com', 70, true],
];
const PLAINTEXT200 = '0123456789'.repeat(20);
const ROUTES = new Set(['/plaintext', '/plaintext200', '/json', '/api/users', '/io', '/cpu', '/mixed', '/health']);

// The contract's xorshift loop over a 64-bit state held as two 32-bit halves:
// V8's int32 arithmetic is exact here and BigInt would cost ~50x per round.
function cpuHash(n) {
  let hi = 0xcbf29ce4 | 0;
  let lo = 0x84222325 | 0;
  for (let i = 0; i < n; i++) {
    lo ^= i; // i < 2^32 (n is at most 10^7), so its high half is zero
    let h = (hi << 13) | (lo >>> 19);
    hi ^= h; lo ^= lo << 13;
    const l = (lo >>> 7) | (hi << 25);
    hi ^= hi >>> 7; lo ^= l;
    h = (hi << 17) | (lo >>> 15);
    hi ^= h; lo ^= lo << 17;
  }
  return ((BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0)).toString();
}

function firstParam(query, name) {
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    if (decode(key) === name) return eq < 0 ? '' : decode(pair.slice(eq + 1));
  }
  return '';
}

// Ordinary URL decoding; a malformed escape keeps the value literally (CONTRACT.md).
function decode(text) {
  const plus = text.replace(/\+/g, ' ');
  try { return decodeURIComponent(plus); } catch (e) { return plus; }
}

// Returns [value, null] or [null, message]; checks "required" before "integer" before "bound".
function intParam(query, name, max) {
  const raw = firstParam(query, name);
  if (raw === '') return [null, `parameter ${name} is required`];
  if (!/^[0-9]+$/.test(raw)) return [null, `parameter ${name} must be a non-negative integer`];
  const digits = raw.replace(/^0+(?=.)/, '');
  if (digits.length > String(max).length || Number(digits) > max) return [null, `parameter ${name} must be at most ${max}`];
  return [Number(digits), null];
}

function send(res, status, type, body, extra) {
  res.statusCode = status;
  res.setHeader('Server', SERVER_NAME);
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  if (extra) for (const [k, v] of extra) res.setHeader(k, v);
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

const json = (res, status, value, extra) => send(res, status, 'application/json', JSON.stringify(value), extra);
const fail = (res, message) => json(res, 400, { error: message });

function health(res) {
  json(res, 200, {
    server: SERVER_NAME, runtime: 'node', runtime_version: process.versions.node, v8_version: process.versions.v8,
    model: 'single-event-loop', settings: {}, contract: 1,
  });
}

function handle(req, res) {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  const query = q < 0 ? '' : req.url.slice(q + 1);
  if (!ROUTES.has(path)) return json(res, 404, { error: 'not found' });
  if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, { error: 'method not allowed' }, [['Allow', 'GET']]);
  switch (path) {
    case '/plaintext': return send(res, 200, 'text/plain', 'Hello, World!');
    case '/plaintext200': return send(res, 200, 'text/plain', PLAINTEXT200);
    case '/json': return json(res, 200, { message: 'Hello, World!' });
    case '/api/users':
      return json(res, 200, USERS.map(([id, name, email, age, active]) => ({ id, name, email, age, active })));
    case '/health': return health(res);
    case '/io': {
      const [ms, err] = intParam(query, 'ms', 10000);
      if (err) return fail(res, err);
      // The event loop's own timer: the loop serves others while this waits.
      return setTimeout(() => json(res, 200, { io_ms: ms }), ms);
    }
    case '/cpu': {
      const [n, err] = intParam(query, 'n', 10000000);
      if (err) return fail(res, err);
      return json(res, 200, { n, hash: cpuHash(n) });
    }
    default: { // /mixed: cpu before io
      const [n, errCpu] = intParam(query, 'cpu', 10000000);
      if (errCpu) return fail(res, errCpu);
      const [ms, errIo] = intParam(query, 'io', 10000);
      if (errIo) return fail(res, errIo);
      const hash = cpuHash(n);
      return setTimeout(() => json(res, 200, { n, hash, io_ms: ms }), ms);
    }
  }
}

const host = process.env.HOST || '0.0.0.0';
const port = Number(process.env.PORT || '8080');
const server = http.createServer({ keepAliveTimeout: 120000, requestTimeout: 30000 }, handle);
// Malformed HTTP: answer 400 and close, as the contract allows, and keep serving everyone else.
server.on('clientError', (err, socket) => {
  if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  else socket.destroy();
});
// The listen queue every server in servers/ asks for (CONTRACT.md): node's default is 511, and under a
// connection per request a burst past the queue costs each dropped client a one-second SYN retransmission.
const LISTEN_BACKLOG = 4096;
server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
  console.error(`${SERVER_NAME} node ${process.versions.node} listening on ${host}:${port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
