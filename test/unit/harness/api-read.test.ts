import { describe, expect, it } from 'vitest';
import { Resources } from '../../../api/kinds.js';
import { parseGet } from '../../harness/api-read.js';

describe('parseGet: the kubectl reads the API answers alike', () => {
  it('takes a kind by any of its names, a name, a namespace and selectors in either flag form', () => {
    expect(parseGet(['get', 'ksvc', 'web', '-n', 'team'])).toEqual({ type: Resources.Service, kind: 'ksvc', name: 'web', namespace: 'team' });
    expect(parseGet(['get', 'revisions', '--namespace=team', '-l', 'serving.knative.dev/service=web'])).toEqual({
      type: Resources.Revision,
      kind: 'revisions',
      namespace: 'team',
      labelSelector: 'serving.knative.dev/service=web',
    });
    expect(parseGet(['get', 'events', '--field-selector', 'involvedObject.kind=Route'])).toMatchObject({
      type: Resources.Event,
      namespace: 'default',
      fieldSelector: 'involvedObject.kind=Route',
    });
    expect(parseGet(['get', 'virtualservices.networking.istio.io', 'web-ingress'])?.type).toBe(Resources.VirtualService);
    expect(parseGet(['get', 'service', 'web'])?.type).toBe(Resources.KubeService);
  });

  it('leaves to kubectl every other form: another verb, flag or kind, kind/name, several names', () => {
    expect(parseGet(['apply', '-f', '-'])).toBeUndefined();
    expect(parseGet(['get', 'ksvc', '-A'])).toBeUndefined();
    expect(parseGet(['get', 'ksvc', 'web', '-o', 'yaml'])).toBeUndefined();
    expect(parseGet(['get', 'nodes'])).toBeUndefined();
    expect(parseGet(['get', 'ksvc/web'])).toBeUndefined();
    expect(parseGet(['get', 'ksvc', 'a', 'b'])).toBeUndefined();
    expect(parseGet(['get', 'ksvc', 'web', '-n'])).toBeUndefined();
  });
});
