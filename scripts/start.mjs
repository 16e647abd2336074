// The README's run command (`npm start`, and `npm run dev` with --watch): installs only when the
// dependencies changed, builds only what changed, then runs the service. Plain JavaScript, so it
// runs before anything is built.
//
//   dependencies  `npm install` when package-lock.json or a package.json changed since the last
//                 install (a hash kept in node_modules/.install-stamp), or node_modules is missing
//   client        clients/typescript, rebuilt when its sources changed (hash in its dist/)
//   web client    web/, rebuilt (type check + vite) when its sources or the client changed (hash in web/dist/)
//   server        `tsc -b tsconfig.build.json`: incremental (dist/.tsbuildinfo); skipped when src/ and the
//                 dependencies are as at its last success (hash in dist/)
//
// `npm run build` stays the clean full build (CI, Docker).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const watch = process.argv.includes('--watch');

function say(line) {
  process.stdout.write(`[start] ${line}\n`);
}

/** Runs a command in the repository root, output shown; stops here if it fails. */
function run(command, args) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    say(`${[path.basename(command), ...args].join(' ')} failed (${result.status ?? result.signal})`);
    process.exit(result.status ?? 1);
  }
}

/** npm itself: the one running this script when there is one (npm start), else the one on PATH. */
function npm(args) {
  const cli = process.env.npm_execpath;
  if (cli && /\.c?js$/.test(cli)) run(process.execPath, [cli, ...args]);
  else run(process.platform === 'win32' ? 'npm.cmd' : 'npm', args);
}

/** Every file under `entry` (a file or a directory), repository-relative, sorted. */
function filesUnder(entry) {
  const full = path.join(ROOT, entry);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [entry];
  return readdirSync(full)
    .filter((name) => name !== 'node_modules' && name !== 'dist')
    .flatMap((name) => filesUnder(path.join(entry, name)))
    .sort();
}

/** A hash of the files' names and contents, and of `extra`. */
function fingerprint(entries, extra = '') {
  const hash = createHash('sha256').update(extra);
  for (const file of entries.flatMap(filesUnder)) hash.update(`\0${file}\0`).update(readFileSync(path.join(ROOT, file)));
  return hash.digest('hex');
}

function stampOf(file) {
  const full = path.join(ROOT, file);
  return existsSync(full) ? readFileSync(full, 'utf8').trim() : undefined;
}

function writeStamp(file, value) {
  writeFileSync(path.join(ROOT, file), `${value}\n`);
}

// Dependencies: what `npm install` reads, and the Node ABI the native modules were built for.
const MANIFESTS = ['package-lock.json', 'package.json', 'web/package.json', 'clients/typescript/package.json'];
const INSTALL_STAMP = 'node_modules/.install-stamp';
const installFingerprint = () => fingerprint(MANIFESTS, `node-abi-${process.versions.modules}`);
if (stampOf(INSTALL_STAMP) !== installFingerprint()) {
  say('dependencies: installing (package-lock.json or a package.json changed, or never installed)');
  npm(['install', '--no-audit', '--no-fund']);
  writeStamp(INSTALL_STAMP, installFingerprint()); // after: the install may have rewritten the lock file
} else {
  say('dependencies: up to date');
}

// The typed client, which the web client imports.
const CLIENT_STAMP = 'clients/typescript/dist/.build-stamp';
const clientFingerprint = fingerprint(['clients/typescript/src', 'clients/typescript/tsconfig.json', 'clients/typescript/package.json']);
if (stampOf(CLIENT_STAMP) !== clientFingerprint || !existsSync(path.join(ROOT, 'clients/typescript/dist/index.js'))) {
  say('client: building');
  npm(['run', '--silent', '-w', 'clients/typescript', 'build']);
  writeStamp(CLIENT_STAMP, clientFingerprint);
} else {
  say('client: up to date');
}

// The web client (VITE_API_BASE is read at build time).
const WEB_STAMP = 'web/dist/.build-stamp';
const webFingerprint = fingerprint(
  [
    'web/src',
    'web/public',
    'web/index.html',
    'web/package.json',
    ...readdirSync(path.join(ROOT, 'web'))
      .filter((name) => /^(vite\.config\.|tsconfig.*\.json$)/.test(name))
      .map((name) => `web/${name}`),
  ],
  `${clientFingerprint}\0${process.env.VITE_API_BASE ?? ''}`,
);
if (stampOf(WEB_STAMP) !== webFingerprint || !existsSync(path.join(ROOT, 'web/dist/index.html'))) {
  say('web client: building');
  npm(['run', '--silent', '-w', 'web', 'build']);
  writeStamp(WEB_STAMP, webFingerprint);
} else {
  say('web client: up to date');
}

// The service: TypeScript's build mode compares the sources with dist/.tsbuildinfo and compiles only what changed.
// When neither the sources nor the dependencies changed since its last success, it is not even started (loading
// the compiler alone takes seconds).
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const SERVER_STAMP = 'dist/.build-stamp';
const serverFingerprint = fingerprint(['src', 'tsconfig.json', 'tsconfig.build.json'], installFingerprint());
if (watch || stampOf(SERVER_STAMP) !== serverFingerprint || !existsSync(path.join(ROOT, 'dist/main.js'))) {
  say('server: tsc -b (incremental)');
  run(process.execPath, [TSC, '-b', 'tsconfig.build.json']);
  writeStamp(SERVER_STAMP, serverFingerprint);
} else {
  say('server: up to date');
}

if (!watch) {
  say('starting node dist/main.js');
  const service = spawn(process.execPath, ['dist/main.js'], { cwd: ROOT, stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => service.kill(signal));
  service.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  // The compiler rewrites dist/ on every save; Node restarts the service when a module it loaded changes.
  say('watching: tsc -b --watch, and node --watch dist/main.js (restarts when the compiled code changes)');
  const compiler = spawn(process.execPath, [TSC, '-b', 'tsconfig.build.json', '--watch', '--preserveWatchOutput'], { cwd: ROOT, stdio: 'inherit' });
  const service = spawn(process.execPath, ['--watch', 'dist/main.js'], { cwd: ROOT, stdio: 'inherit' });
  const stop = (signal) => {
    compiler.kill(signal);
    service.kill(signal);
  };
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => stop(signal));
  service.on('exit', (code) => {
    compiler.kill('SIGTERM');
    process.exit(code ?? 0);
  });
}
