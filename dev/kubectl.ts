// kubectl against a stack's kubeconfig, and where the repository is: what every dev tool starts from.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export async function kubectl(info: { kubeconfig: string; bins: { KUBECTL: string } }, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(info.bins.KUBECTL, ['--kubeconfig', info.kubeconfig, ...args], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
    );
    if (input !== undefined) {
      child.stdin?.end(input);
    }
  });
}
