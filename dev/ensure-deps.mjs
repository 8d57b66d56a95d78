// Installs what `npm run up` / `npm test` need when it is missing, so both work on a fresh clone (it is the `preup`
// and `pretest` script): npm dependencies (when node_modules is missing or older than package-lock.json) and the
// Debian packages of the real registry both run (`up`'s local registry on :5443, the digest tests' own registries
// with htpasswd auth). Plain JS: it runs before any dependency exists.
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

if (!(has('docker-registry') && has('htpasswd'))) {
  const packages = 'docker-registry apache2-utils';
  if (process.getuid?.() !== 0) {
    console.error(`[tidal] npm run up and npm test need Debian's ${packages}: run  sudo apt-get install -y ${packages}`);
    process.exit(1);
  }
  console.error(`[tidal] installing ${packages} (apt-get)…`);
  execSync(`apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${packages}`, { stdio: 'inherit', shell: '/bin/bash' });
}
