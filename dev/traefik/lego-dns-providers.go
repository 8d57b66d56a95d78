// Stand-in for lego's generated DNS-01 provider registry (providers/dns/zz_gen_dns_providers.go), written over that
// file in dev/build-traefik.sh's private copy of lego. The real registry imports every cloud DNS SDK lego supports,
// and the Go module proxy refuses some of them, so Traefik would not build from the proxy alone. The local stack
// never asks Traefik for ACME certificates, so this keeps the exported API and refuses every provider by name.

package dns

import (
	"fmt"

	"github.com/go-acme/lego/v5/challenge"
)

// NewDNSChallengeProviderByName has the signature of lego's registry function; it knows no provider.
func NewDNSChallengeProviderByName(name string) (challenge.Provider, error) {
	return nil, fmt.Errorf("DNS-01 provider %q: DNS-01 providers are not built into this Traefik (ACME HTTP-01 and TLS-ALPN-01 still work)", name)
}
