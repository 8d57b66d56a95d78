// The Temporal connection's settings from the environment and the mounted Secret (workers/temporal.ts).
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeTemporal, loadTemporalSettings, temporalConnectOptions, temporalSetupCommands } from '../../../workers/temporal.js';
import { loadConfig } from '../../../workers/config.js';

function secretDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tidal-temporal-'));
  for (const [f, v] of Object.entries(files)) writeFileSync(path.join(dir, f), v);
  return dir;
}

describe('Temporal connection settings', () => {
  it('defaults to plain gRPC on 127.0.0.1:7233, namespace default, no registration', () => {
    const s = loadTemporalSettings({});
    expect(s).toEqual({ address: '127.0.0.1:7233', namespace: 'default', tls: undefined, apiKey: undefined, createNamespace: false });
    expect(temporalConnectOptions(s)).toEqual({ address: '127.0.0.1:7233' });
  });

  it('an empty Secret folder (the optional Secret absent) is plain gRPC', () => {
    expect(loadTemporalSettings({ TEMPORAL_TLS_DIR: secretDir({}) }).tls).toBeUndefined();
  });

  it('reads the server CA, the mTLS pair and the server name from the Secret folder', () => {
    const dir = secretDir({ 'ca.crt': 'CA-PEM', 'tls.crt': 'CERT-PEM', 'tls.key': 'KEY-PEM', 'server-name': 'temporal.example\n' });
    const s = loadTemporalSettings({ TEMPORAL_ADDRESS: 'temporal-frontend.temporal.svc:7233', TEMPORAL_NAMESPACE: 'tidal', TEMPORAL_TLS_DIR: dir });
    expect(temporalConnectOptions(s)).toEqual({
      address: 'temporal-frontend.temporal.svc:7233',
      tls: {
        serverRootCACertificate: Buffer.from('CA-PEM'),
        clientCertPair: { crt: Buffer.from('CERT-PEM'), key: Buffer.from('KEY-PEM') },
        serverNameOverride: 'temporal.example',
      },
    });
    // Logs say what is in use, never the material.
    expect(JSON.stringify(describeTemporal(s))).not.toMatch(/PEM/);
  });

  it('an API key alone turns TLS on with the system CAs (Temporal Cloud)', () => {
    const s = loadTemporalSettings({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_TLS_DIR: secretDir({ 'api-key': 'sekrit\n' }) });
    expect(temporalConnectOptions(s)).toEqual({ address: 'ns.acct.tmprl.cloud:7233', tls: {}, apiKey: 'sekrit' });
    expect(describeTemporal(s)).toEqual({
      address: 'ns.acct.tmprl.cloud:7233',
      namespace: 'default',
      tls: { serverCA: false, clientCert: false },
      apiKey: true,
    });
  });

  it('TEMPORAL_TLS=true is TLS without any file; bad values and half an mTLS pair are refused', () => {
    expect(loadTemporalSettings({ TEMPORAL_TLS: 'true' }).tls).toEqual({});
    expect(() => loadTemporalSettings({ TEMPORAL_TLS: 'sure' })).toThrow('TEMPORAL_TLS=sure: expected true or false');
    expect(() => loadTemporalSettings({ TEMPORAL_TLS_DIR: secretDir({ 'tls.crt': 'CERT' }) })).toThrow('tls.key is missing');
    expect(() => loadTemporalSettings({ TIDAL_TEMPORAL_CREATE_NAMESPACE: 'maybe' })).toThrow('TIDAL_TEMPORAL_CREATE_NAMESPACE=maybe');
    expect(loadTemporalSettings({ TIDAL_TEMPORAL_CREATE_NAMESPACE: 'true' }).createNamespace).toBe(true);
  });

  it('the controller config carries the same settings', () => {
    const cfg = loadConfig({ TEMPORAL_ADDRESS: 'x:1', TEMPORAL_NAMESPACE: 'tidal' });
    expect(cfg.temporal.address).toBe('x:1');
    expect(cfg.temporalAddress).toBe('x:1');
    expect(cfg.temporalNamespace).toBe('tidal');
  });

  it('prints one CLI command per missing piece', () => {
    expect(temporalSetupCommands({ address: 'a:1', namespace: 'n' }, { namespace: false, attributes: ['KnativeName'] })).toEqual([
      'temporal operator search-attribute create --namespace n --name KnativeName --type Keyword --address a:1',
    ]);
  });
});
