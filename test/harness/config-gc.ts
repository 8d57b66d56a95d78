// config-gc as the e2e files set it: the four keys that decide which Revisions are collected, the values the shipped
// deploy/config/config-gc.yaml has (hakn's), and the kubectl arguments that set them (null or absent: the key
// removed, Knative's default).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { repoRoot } from '../../dev/stack.js';

export const gcKeys = ['min-non-active-revisions', 'max-non-active-revisions', 'retain-since-create-time', 'retain-since-last-active-time'] as const;

/** The shipped values of the four keys. */
export const shippedGc: Record<string, string> = (
  parse(readFileSync(`${repoRoot}/deploy/config/config-gc.yaml`, 'utf8')) as { data: Record<string, string> }
).data;

/** `kubectl` arguments that set config-gc's four keys to `data`'s values. */
export function setGcArgs(data: Readonly<Record<string, string | null | undefined>>): string[] {
  return [
    'patch',
    'configmap',
    'config-gc',
    '-n',
    'knative-serving',
    '--type=merge',
    '-p',
    JSON.stringify({ data: Object.fromEntries(gcKeys.map((k) => [k, data[k] ?? null])) }),
  ];
}
