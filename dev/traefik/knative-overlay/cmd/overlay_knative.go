package main

// Tells the Knative provider which configuration Traefik serves, so that it marks a KIngress Ready only once its
// routers are live. Registered right after the listener that switches the entry points to the new routers.

import (
	"github.com/traefik/traefik/v3/pkg/config/dynamic"
	"github.com/traefik/traefik/v3/pkg/provider/kubernetes/knative"
)

func knativeConfigurationApplied(conf dynamic.Configuration) {
	knative.ConfigurationApplied(conf)
}
