import { describe, expect, it } from 'vitest';
import { parseArgs, type StoryArgs } from '../../../cli/args.js';

const parsed = (argv: string[]) => parseArgs(argv) as StoryArgs;
const refusal = (argv: string[]) => (parseArgs(argv) as Error).message;

describe('kubectl tidal arguments', () => {
  it('kind/name or kind name, with kubectl short names, and the view', () => {
    expect(parsed(['ksvc/nginx'])).toMatchObject({ view: 'auto', kind: { kind: 'Service' }, name: 'nginx', passes: 10 });
    expect(parsed(['story', 'rev', 'nginx-00001', '-n', 'prod'])).toMatchObject({ view: 'story', kind: { kind: 'Revision' }, namespace: 'prod' });
    expect(parsed(['why', 'dm/coolcoffee.company'])).toMatchObject({ view: 'why', kind: { kind: 'DomainMapping' }, name: 'coolcoffee.company' });
    expect(parsed(['cfg/x', '--passes=3', '--kubeconfig', '/k', '--context', 'c'])).toMatchObject({ passes: 3, kubeconfig: '/k', context: 'c' });
  });

  it('Temporal connection overrides', () => {
    expect(parsed(['route/r', '--temporal-address', 'h:7233', '--temporal-namespace', 'prod', '--temporal-tls-dir', '/tls']).temporal).toEqual({
      address: 'h:7233',
      namespace: 'prod',
      tlsDir: '/tls',
    });
  });

  it('refuses what it cannot read, naming it', () => {
    expect(refusal(['svc/nginx'])).toContain('a Knative Service is ksvc');
    expect(refusal(['pod/x'])).toContain('unknown kind "pod"');
    expect(refusal(['ksvc/x', '--passes', '0'])).toContain('--passes 0');
    expect(refusal(['ksvc/x', '--bogus'])).toContain('unknown flag --bogus');
    expect(parseArgs([])).toBe('help');
    expect(parseArgs(['ksvc/x', '-h'])).toBe('help');
  });
});
