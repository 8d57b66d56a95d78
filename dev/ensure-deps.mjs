// Installs npm dependencies when they are missing or older than package-lock.json, so that `npm run up` and
// `npm test` work on a fresh clone. Plain JS: it runs before any dependency exists.
import { execSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

const marker = 'node_modules/.package-lock.json';
const stale = !existsSync(marker) || (existsSync('package-lock.json') && statSync('package-lock.json').mtimeMs > statSync(marker).mtimeMs + 1000);
if (stale) {
  console.error('[tidal] installing npm dependencies (npm ci)…');
  execSync(existsSync('package-lock.json') ? 'npm ci --no-audit --no-fund' : 'npm install --no-audit --no-fund', { stdio: 'inherit' });
}
