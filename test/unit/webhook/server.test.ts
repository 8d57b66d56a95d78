// The webhook server on loopback: AdmissionReviews over HTTP/2 and HTTP/1.1, certificates swapped without a restart,
// and a drain that keeps answering while asking clients to leave.
import http2 from 'node:http2';
import https from 'node:https';
import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultAutoscalerConfig, defaultDefaultsConfig } from '../../../api/config/index.js';
import { makeWebhookCertificates, type WebhookCertificates } from '../../../pki/webhook-certificates.js';
import { WebhookServer } from '../../../webhook/server.js';

const config = () => ({
  defaults: defaultDefaultsConfig(),
  validation: { autoscaler: defaultAutoscalerConfig() },
  systemNamespace: 'knative-serving',
});
const now = new Date();
const [certsA, certsB] = await Promise.all([
  makeWebhookCertificates({ systemNamespace: 'knative-serving', validityHours: 24, now }),
  makeWebhookCertificates({ systemNamespace: 'knative-serving', validityHours: 24, now }),
]);

const review = {
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'u1',
    kind: { group: 'serving.knative.dev', version: 'v1', kind: 'Route' },
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    object: {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Route',
      metadata: { name: 'r', namespace: 'default' },
      spec: {
        traffic: [
          { configurationName: 'c', percent: 60 },
          { configurationName: 'd', percent: 60 },
        ],
      },
    },
  },
};

let server: WebhookServer | undefined;
afterEach(async () => {
  await server?.close(100);
  server = undefined;
});

async function start(certs: WebhookCertificates): Promise<number> {
  // Port 0: the kernel picks a free one (a random pick may collide with a stack running beside the tests).
  server = new WebhookServer({ port: 0, host: '127.0.0.1', config, log: pino({ level: 'silent' }) });
  await server.listen(certs, '1');
  return server.port!;
}

function postH2(port: number, ca: string, path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { ca });
    session.on('error', reject);
    const req = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json' });
    let status = 0;
    let data = '';
    req.on('response', (h) => (status = Number(h[':status'])));
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      session.close();
      resolve({ status, json: JSON.parse(data) as unknown });
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function postH1(port: number, ca: string, path: string, body: unknown): Promise<{ status: number; json: unknown; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path, method: 'POST', ca, headers: { 'content-type': 'application/json' } }, (res) => {
      let data = '';
      res.on('data', (c: Buffer) => (data += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(data) as unknown, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function servedCertificate(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const raw = socket.getPeerX509Certificate();
      socket.end();
      resolve(raw?.fingerprint256 ?? '');
    });
    socket.on('error', reject);
  });
}

describe('WebhookServer', () => {
  it('answers AdmissionReviews over HTTP/2 and HTTP/1.1, verified against the CA for 127.0.0.1', async () => {
    const port = await start(certsA);
    const h2 = await postH2(port, certsA.caCertPem, '/resource-validation', review);
    expect(h2.status).toBe(200);
    expect(h2.json).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: 'u1',
        allowed: false,
        status: { code: 400, message: 'validation failed: Traffic targets sum to 120, want 100: spec.traffic' },
      },
    });
    const h1 = await postH1(port, certsA.caCertPem, '/defaulting', review);
    expect(h1.json).toMatchObject({ response: { uid: 'u1', allowed: true, patchType: 'JSONPatch' } });
    expect((await postH1(port, certsA.caCertPem, '/nope', review)).status).toBe(404);
  });

  it('serves new certificates to new connections after useCertificates, without a restart', async () => {
    const port = await start(certsA);
    expect(await servedCertificate(port)).toBe(new X509Certificate(certsA.certPem).fingerprint256);
    server!.useCertificates(certsB, '2');
    expect(await servedCertificate(port)).toBe(new X509Certificate(certsB.certPem).fingerprint256);
    expect((await postH2(port, certsB.caCertPem, '/resource-validation', review)).status).toBe(200);
    await expect(postH2(port, certsA.caCertPem, '/resource-validation', review)).rejects.toThrow();
  });

  it('keeps answering while draining, asking HTTP/1.1 clients to close and HTTP/2 clients to go away', async () => {
    const port = await start(certsA);
    const session = http2.connect(`https://127.0.0.1:${port}`, { ca: certsA.caCertPem });
    const goaway = new Promise<void>((resolve) => session.on('goaway', () => resolve()));
    await new Promise<void>((resolve) => session.on('connect', () => resolve()));
    // The server registers the session a moment after the client sees the handshake done.
    await new Promise((r) => setTimeout(r, 200));
    server!.beginDrain();
    expect(server!.listening).toBe(false);
    await goaway;
    session.close();
    const h1 = await postH1(port, certsA.caCertPem, '/resource-validation', review);
    expect(h1.status).toBe(200);
    expect(h1.connection).toBe('close');
    expect((await postH2(port, certsA.caCertPem, '/resource-validation', review)).status).toBe(200);
  });
});
