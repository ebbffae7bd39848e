// Run the official Godot 4 web export template under plain Node.js (no browser).
//
//   node run_web.js ENGINE_DIR PCK_PATH TIMEOUT_MS
//
// ENGINE_DIR holds the template's index.js + index.wasm.  The engine's stdout goes to our stdout and
// its stderr to our stderr, one line per callback, written synchronously so that nothing is lost when
// we exit.  Exit status: the engine's own exit code; 70 if the engine crashed (wasm trap, JS error);
// 124 on timeout.
//
// Why a vm context with a fake DOM: index.js is written for a browser page.  It only needs a canvas,
// fetch() for the .wasm and .pck, and a few window/document/navigator fields to boot headless.
'use strict';
const vm = require('vm');
const fs = require('fs');
const path = require('path');

const [engineDir, pckPath, timeoutArg] = process.argv.slice(2);
if (!engineDir || !pckPath) {
  process.stderr.write('usage: node run_web.js ENGINE_DIR PCK_PATH [TIMEOUT_MS]\n');
  process.exit(2);
}
const timeoutMs = Number(timeoutArg || 60000);

const pause = new Int32Array(new SharedArrayBuffer(4));

// fs.writeSync() on a pipe may write only part of a long line (or throw EAGAIN when the pipe is
// full and non-blocking): loop until every byte is out.
function out(fd, text) {
  const buf = Buffer.from(text + '\n', 'utf8');
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(fd, buf, off, buf.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
      Atomics.wait(pause, 0, 0, 2); // the reader is behind: wait 2 ms
    }
  }
}

function die(code, msg) {
  out(2, msg);
  process.exit(code);
}

process.on('uncaughtException', (e) => die(70, '@@RUNNER crash: ' + ((e && e.stack) || e)));
process.on('unhandledRejection', (e) => die(70, '@@RUNNER crash: ' + ((e && e.stack) || e)));

class HTMLCanvasElement {
  constructor() { this.style = {}; this.width = 64; this.height = 64; this.tabIndex = 0; }
  addEventListener() {}
  removeEventListener() {}
  getContext() { return null; } // no WebGL: the engine runs with --headless anyway
  getBoundingClientRect() { return { left: 0, top: 0, width: 64, height: 64 }; }
  focus() {}
  setAttribute() {}
}
const canvas = new HTMLCanvasElement();

// Every URL the template fetches is a file: the .pck we built or a file of the template.
function localFile(url) {
  const name = path.basename(new URL(url, 'http://127.0.0.1/').pathname);
  return name.endsWith('.pck') ? pckPath : path.join(engineDir, name);
}

async function fakeFetch(url) {
  const buf = fs.readFileSync(localFile(url));
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length);
  return {
    ok: true,
    status: 200,
    headers: { get: (h) => (h.toLowerCase() === 'content-length' ? String(buf.length) : null) },
    arrayBuffer: async () => ab,
    body: {
      getReader() {
        let done = false;
        return { read: async () => (done ? { done: true } : ((done = true), { done: false, value: new Uint8Array(buf) })) };
      },
    },
  };
}

const win = {
  HTMLCanvasElement,
  console: { log: (...a) => out(2, a.join(' ')), error: (...a) => out(2, a.join(' ')), warn: (...a) => out(2, a.join(' ')), info() {}, debug() {} },
  navigator: { userAgent: 'Mozilla/5.0 Chrome/120.0', language: 'en-US', languages: ['en-US'], hardwareConcurrency: 1, getGamepads: () => [] },
  location: { href: 'http://127.0.0.1/index.html', search: '', protocol: 'http:' },
  document: {
    getElementsByTagName: (t) => (t === 'canvas' ? [canvas] : []),
    getElementById: () => canvas,
    addEventListener() {},
    removeEventListener() {},
    createElement: () => new HTMLCanvasElement(),
    body: { appendChild() {} },
    visibilityState: 'visible',
    hasFocus: () => true,
    currentScript: { src: 'http://127.0.0.1/index.js' },
  },
  addEventListener() {},
  removeEventListener() {},
  devicePixelRatio: 1,
  screen: { width: 64, height: 64 },
  matchMedia: () => ({ matches: false, addEventListener() {} }),
  performance, setTimeout, clearTimeout, setInterval, clearInterval, TextDecoder, TextEncoder, URL, WebAssembly,
  crypto: require('crypto').webcrypto,
  requestAnimationFrame: (cb) => setTimeout(() => cb(performance.now()), 1),
  cancelAnimationFrame: (id) => clearTimeout(id),
  fetch: fakeFetch,
  ReadableStream, Blob, Response, Headers, Request,
  Event: class { constructor(t) { this.type = t; } },
  indexedDB: undefined,
  AudioContext: undefined,
  isSecureContext: true,
  crossOriginIsolated: false,
};
win.window = win;
win.self = win;
win.globalThis = win;
const ctx = vm.createContext(win);
// Emscripten collects each output line in a plain JS array and decodes it byte by byte, which takes
// ~20 s for a 30 MB line; a typed array lets it use TextDecoder.  (No match: runs unpatched, slower.)
const engineJs = fs
  .readFileSync(path.join(engineDir, 'index.js'), 'utf8')
  .split('UTF8ArrayToString(tty.output)')
  .join('UTF8ArrayToString(Uint8Array.from(tty.output))');
vm.runInContext(engineJs + '\n;globalThis.Engine = Engine;', ctx, { filename: 'index.js' });

setTimeout(() => die(124, '@@RUNNER timeout after ' + timeoutMs + ' ms'), timeoutMs).unref();

const engine = new win.Engine({
  executable: 'index',
  mainPack: path.basename(pckPath),
  args: ['--headless'],
  persistentPaths: [],
  canvas,
  focusCanvas: false,
  canvasResizePolicy: 0,
  onPrint: (...a) => out(1, a.join(' ')),
  onPrintError: (...a) => out(2, a.join(' ')),
  onExit: (code) => process.exit(code),
});
// startGame() also rejects when the engine traps later on (wasm stack overflow, OOM...).
engine.startGame().catch((e) => die(70, '@@RUNNER engine crashed: ' + ((e && e.stack) || e)));
