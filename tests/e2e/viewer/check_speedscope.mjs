// Loads a trace in speedscope (the npm package's static build, served over
// HTTP on 127.0.0.1) in headless Chromium and checks that named spans appear.
// No dependencies beyond Node's standard library.
//
// Usage:
//   node check_speedscope.mjs --speedscope DIR --chromium BIN --trace FILE
//       --screenshot OUT.png [--expect NAME]... [--expect-once NAME]...
// DIR is the speedscope package folder (node_modules/speedscope); FILE any
// format speedscope imports (a Chrome trace, folded stacks). Exits 0 when
// every --expect name is in the sandwich view's table, and every
// --expect-once name is exactly one row of it (its calls merged into one
// frame); 1 when not; 2 on a usage or setup error. Prints what it found.
import {spawn} from 'node:child_process';
import {createServer} from 'node:http';
import {readFile, stat} from 'node:fs/promises';
import {basename, extname, join, normalize, resolve, sep} from 'node:path';

function usage(message) {
  console.error(`check_speedscope: ${message}`);
  process.exit(2);
}

const options = {expect: [], expectOnce: []};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const key = argv[i];
  const value = argv[i + 1];
  if (value === undefined) usage(`${key} needs a value`);
  if (key === '--expect') options.expect.push(value);
  else if (key === '--expect-once') options.expectOnce.push(value);
  else if (['--speedscope', '--chromium', '--trace', '--screenshot'].includes(key))
    options[key.slice(2)] = value;
  else usage(`unknown option ${key}`);
}
for (const key of ['speedscope', 'chromium', 'trace', 'screenshot']) {
  if (!options[key]) usage(`missing --${key}`);
}
const release = resolve(options.speedscope, 'dist', 'release');
try {
  await stat(join(release, 'index.html'));
} catch {
  usage(`no speedscope build at ${release}`);
}
const trace = await readFile(options.trace).catch(() => usage(`cannot read ${options.trace}`));

const types = {
  '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
  '.json': 'application/json', '.png': 'image/png', '.ico': 'image/x-icon',
  '.woff2': 'font/woff2', '.wasm': 'application/wasm', '.txt': 'text/plain',
};
const server = createServer(async (request, response) => {
  const path = decodeURIComponent(new URL(request.url, 'http://x').pathname);
  if (path === '/trace.json') {
    response.writeHead(200, {'content-type': 'application/json'});
    response.end(trace);
    return;
  }
  const file = normalize(join(release, path === '/' ? 'index.html' : path));
  if (!file.startsWith(release + sep)) {
    response.writeHead(403).end();
    return;
  }
  try {
    const body = await readFile(file);
    response.writeHead(200, {'content-type': types[extname(file)] ?? 'application/octet-stream'});
    response.end(body);
  } catch {
    response.writeHead(404).end();
  }
});
await new Promise((done) => server.listen(0, '127.0.0.1', done));
const port = server.address().port;

// Runs headless Chromium on `url`; resolves with its stdout.
function chromium(url, extra) {
  return new Promise((done, fail) => {
    const args = [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
      '--no-first-run', '--no-default-browser-check', '--hide-scrollbars',
      '--window-size=1400,900', '--virtual-time-budget=20000', ...extra, url,
    ];
    const child = spawn(options.chromium, args, {stdio: ['ignore', 'pipe', 'pipe']});
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    let timedOut = false;
    // An error dialog (speedscope alerts when it cannot import a file) stops
    // virtual time, and Chromium then never finishes on its own.
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, 60000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) {
        fail(new Error('chromium did not finish within 60 s: speedscope probably ' +
                       'showed an error dialog, i.e. it could not import the trace'));
      } else if (code !== 0) {
        fail(new Error(`chromium exited with ${code}: ${err.slice(-2000)}`));
      } else {
        done(out);
      }
    });
  });
}

const title = basename(options.trace);
const base = `http://127.0.0.1:${port}/index.html#profileURL=${encodeURIComponent('/trace.json')}` +
    `&title=${encodeURIComponent(title)}`;
let status = 0;
try {
  // The sandwich view lists every frame by name in a DOM table.
  const dom = await chromium(`${base}&view=sandwich`, ['--dump-dom']);
  const missing = options.expect.filter((name) => !dom.includes(name));
  if (!dom.includes(title)) {
    console.log('speedscope did not show the profile title: the trace did not load');
    status = 1;
  }
  for (const name of options.expect) {
    console.log(`${missing.includes(name) ? 'MISSING' : 'found'} ${name}`);
  }
  if (missing.length > 0) status = 1;
  // A table cell holding exactly the name.
  const escaped = (name) => name.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  for (const name of options.expectOnce) {
    const rows = dom.split(`>${escaped(name)}<`).length - 1;
    console.log(`${rows === 1 ? 'found once' : `found ${rows} times`} ${name}`);
    if (rows !== 1) status = 1;
  }
  // The time-ordered flame chart, for people to look at.
  await chromium(`${base}&view=time-ordered`, [`--screenshot=${resolve(options.screenshot)}`]);
  console.log(`screenshot ${resolve(options.screenshot)}`);
} catch (error) {
  console.log(`error: ${error.message}`);
  status = 2;
} finally {
  server.close();
}
process.exit(status);
