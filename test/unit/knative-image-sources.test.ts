// Which binaries dev/knative-images.ts packages for which roles: serving's from bin/, knative.dev/networking's test
// images from bin-networking/ with layouts of their own, and never both sets of test images at once, as they share names.
import { describe, expect, it } from 'vitest';
import { imageSources, type KnativeBinaries } from '../../dev/knative-images.js';

const bins: KnativeBinaries = {
  version: 'v0.51.0',
  binDir: '/c/bin',
  kodataDir: '/c/kodata',
  testsDir: '/c/tests',
  moduleDir: '/m/serving',
  packages: {
    queue: 'knative.dev/serving/cmd/queue',
    runtime: 'knative.dev/serving/test/test_images/runtime',
    controller: 'knative.dev/serving/cmd/controller',
  },
  roles: { queue: 'queue', runtime: 'test', controller: 'serving' },
  networking: {
    binDir: '/c/bin-networking',
    kodataDir: '/c/kodata-networking',
    moduleDir: '/m/networking',
    packages: { runtime: 'knative.dev/networking/test/test_images/runtime', retry: 'knative.dev/networking/test/test_images/retry' },
  },
};

describe('imageSources', () => {
  it("takes serving's images of the roles asked for from bin/, layouts in oci/", () => {
    expect(imageSources(bins, ['queue', 'test'])).toEqual([
      { name: 'queue', importPath: 'knative.dev/serving/cmd/queue', binary: '/c/bin/queue', kodataDir: '/c/kodata/queue', layout: '/c/oci/queue' },
      {
        name: 'runtime',
        importPath: 'knative.dev/serving/test/test_images/runtime',
        binary: '/c/bin/runtime',
        kodataDir: '/c/kodata/runtime',
        layout: '/c/oci/runtime',
      },
    ]);
  });

  it("takes networking's from bin-networking/, layouts in oci-networking/, beside queue-proxy", () => {
    const sources = imageSources(bins, ['queue', 'networking']);
    expect(sources.map((s) => [s.name, s.binary, s.layout])).toEqual([
      ['queue', '/c/bin/queue', '/c/oci/queue'],
      ['runtime', '/c/bin-networking/runtime', '/c/oci-networking/runtime'],
      ['retry', '/c/bin-networking/retry', '/c/oci-networking/retry'],
    ]);
  });

  it("refuses serving's and networking's test images together", () => {
    expect(() => imageSources(bins, ['test', 'networking'])).toThrow(/share names/);
  });
});
