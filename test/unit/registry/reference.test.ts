import { describe, expect, it } from 'vitest';
import { formatReference, parseReference } from '../../../registry/reference.js';

const SHA = 'sha256:' + '0123456789abcdef'.repeat(4);

describe('parseReference (go-containerregistry name rules, weak validation)', () => {
  it.each([
    ['nginx', 'index.docker.io/library/nginx:latest'],
    ['nginx:1.27', 'index.docker.io/library/nginx:1.27'],
    ['library/nginx', 'index.docker.io/library/nginx:latest'],
    ['docker.io/nginx', 'index.docker.io/library/nginx:latest'],
    ['docker.io/library/nginx:alpine', 'index.docker.io/library/nginx:alpine'],
    ['index.docker.io/nginx', 'index.docker.io/library/nginx:latest'],
    ['bitnami/nginx:1.2.3-debian-12-r0', 'index.docker.io/bitnami/nginx:1.2.3-debian-12-r0'],
    ['user/team/app', 'index.docker.io/user/team/app:latest'],
    ['registry-1.docker.io/foo/bar', 'registry-1.docker.io/foo/bar:latest'],
    ['gcr.io/knative-releases/helloworld-go', 'gcr.io/knative-releases/helloworld-go:latest'],
    ['ghcr.io/example/hello:v1', 'ghcr.io/example/hello:v1'],
    ['localhost:5000/app', 'localhost:5000/app:latest'],
    ['localhost/app:dev', 'localhost/app:dev'],
    ['127.0.0.1:5000/a/b/c:tag_1', '127.0.0.1:5000/a/b/c:tag_1'],
    ['[::1]:5000/app:x', '[::1]:5000/app:x'],
    ['registry.example.com:8443/team/app:v2', 'registry.example.com:8443/team/app:v2'],
    ['ko.local/github.com/example/cmd', 'ko.local/github.com/example/cmd:latest'],
    ['kind.local/app:dev', 'kind.local/app:dev'],
    ['my-registry.example.com/a__b/c-d.e_f', 'my-registry.example.com/a__b/c-d.e_f:latest'],
    [`nginx@${SHA}`, `index.docker.io/library/nginx@${SHA}`],
    [`gcr.io/x/y:1.0@${SHA}`, `gcr.io/x/y:1.0@${SHA}`],
  ])('%s → %s', (image, want) => {
    expect(formatReference(parseReference(image))).toBe(want);
  });

  it('splits registry, repository, tag and digest', () => {
    expect(parseReference('localhost:5000/team/app:v1')).toEqual({ registry: 'localhost:5000', repository: 'team/app', tag: 'v1' });
    expect(parseReference(`ghcr.io/a/b@${SHA}`)).toEqual({ registry: 'ghcr.io', repository: 'a/b', tag: '', digest: SHA });
    expect(parseReference('nginx')).toEqual({ registry: 'index.docker.io', repository: 'library/nginx', tag: 'latest' });
  });

  it.each([
    ['', /empty/],
    ['Nginx', /must be lowercase/],
    ['gcr.io/Team/App', /must be lowercase/],
    ['https://gcr.io/x/y', /no URL scheme/],
    ['nginx:', /tag "" is not valid/],
    ['nginx:bad/tag', /registry "nginx:bad" is not a valid host/],
    ['nginx:-x', /tag "-x" is not valid/],
    ['nginx@sha256:abc', /digest must be sha256/],
    [`nginx@sha512:${'a'.repeat(64)}`, /digest must be sha256/],
    ['gcr.io/', /no repository name/],
    ['a//b', /repository name may only contain/],
    ['nginx latest', /whitespace/],
    ['bad_host.example.com/app', /registry "bad_host.example.com" is not a valid host/],
  ])('rejects %j', (image, msg) => {
    expect(() => parseReference(image)).toThrow(msg);
    expect(() => parseReference(image)).toThrow(`invalid image reference ${JSON.stringify(image)}`);
  });
});
