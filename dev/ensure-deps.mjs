// Installs what `npm run up` / `npm test` need when it is missing, so both work on a fresh clone (it is the `preup`
// and `pretest` script): npm dependencies (when node_modules is missing or older than package-lock.json), the
// Debian packages of the real registry both run (`up`'s local registry on :5443, the digest tests' own registries
// with htpasswd auth) and jemalloc, the controller's allocator (dev/allocator.ts; without it the controller runs on
// glibc's malloc and says so), and as root the real node's runtime packages. Plain JS: it runs before any dependency exists.
import { execSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

const marker = 'node_modules/.package-lock.json';
const stale = !existsSync(marker) || (existsSync('package-lock.json') && statSync('package-lock.json').mtimeMs > statSync(marker).mtimeMs + 1000);
if (stale) {
  // `npm install` rather than `npm ci`: npm 11 refuses `ci` when the lock file lacks other platforms' optional
  // packages (swc, rollup), which it does not always record; `install` honours the lock file all the same.
  console.error('[tidal] installing npm dependencies (npm install)…');
  execSync('npm install --no-audit --no-fund', { stdio: 'inherit' });
}

const has = (cmd) => {
  try {
    execSync(`command -v ${cmd}`, { stdio: 'ignore', shell: '/bin/bash' });
    return true;
  } catch {
    return false;
  }
};

const hasJemalloc = () => {
  try {
    return execSync('/sbin/ldconfig -p', { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).includes('libjemalloc.so.2 ');
  } catch {
    return false;
  }
};

const root = process.getuid?.() === 0;
const install = (packages) =>
  execSync(`apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${packages}`, { stdio: 'inherit', shell: '/bin/bash' });

if (!(has('docker-registry') && has('htpasswd'))) {
  const packages = 'docker-registry apache2-utils';
  if (!root) {
    console.error(`[tidal] npm run up and npm test need Debian's ${packages}: run  sudo apt-get install -y ${packages}`);
    process.exit(1);
  }
  console.error(`[tidal] installing ${packages} (apt-get)…`);
  install(packages);
}

// jemalloc is wanted, not needed: without it the controller runs (and the tests pass) on glibc's malloc.
if (!hasJemalloc()) {
  const glibc = "[tidal] the controller will run on glibc's malloc (more memory at rest)";
  if (!root) console.error(`${glibc}: sudo apt-get install -y libjemalloc2`);
  else {
    console.error('[tidal] installing libjemalloc2 (apt-get)…');
    try {
      install('libjemalloc2');
    } catch (err) {
      console.error(`${glibc}: apt-get install libjemalloc2 failed (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`);
    }
  }
}

// The real node (dev/node.ts: `npm run up -- --real-node` and the `real` test layer) runs on Debian's containerd and
// runc, with socat forwards and iproute2's namespaces. Only root can run it, so only root installs them; without them
// that layer says what is missing and refuses to start.
const nodePackages = { containerd: 'containerd', runc: 'runc', socat: 'socat', ip: 'iproute2', nsenter: 'util-linux', jq: 'jq' };
const missingNode = [
  ...new Set(
    Object.entries(nodePackages)
      .filter(([cmd]) => !has(cmd))
      .map(([, pkg]) => pkg),
  ),
];
if (missingNode.length > 0 && root) {
  console.error(`[tidal] installing the real node's ${missingNode.join(' ')} (apt-get)…`);
  try {
    install(missingNode.join(' '));
  } catch (err) {
    console.error(
      `[tidal] apt-get install ${missingNode.join(' ')} failed (${err instanceof Error ? err.message.split('\n')[0] : String(err)}): the real node cannot start`,
    );
  }
}
