package knative

// Backends from EndpointSlices. Upstream sends every split to its Service's ClusterIP, which only works where
// kube-proxy (or an equivalent) answers on it; the local stack has none, so each split is served by the ready pod
// addresses of its Service instead, and EndpointSlice events rebuild the configuration so that pod changes re-route.

import (
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/traefik/traefik/v3/pkg/config/dynamic"
	"github.com/traefik/traefik/v3/pkg/provider/kubernetes/k8s"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	knativenetworking "knative.dev/networking/pkg/apis/networking"
)

// watchEndpointSlices registers the EndpointSlice informer of a namespace's factory before the factory starts, so
// that WatchAll starts it and waits for its cache like the others, and its events go to the same rebuild channel.
func watchEndpointSlices(factory kinformers.SharedInformerFactory, handler cache.ResourceEventHandler) error {
	informer := factory.Discovery().V1().EndpointSlices().Informer()
	// The index by `kubernetes.io/service-name` avoids scanning every slice of the namespace for each split.
	if err := informer.AddIndexers(k8s.EndpointSliceByServiceNameIndexers); err != nil {
		return err
	}
	_, err := informer.AddEventHandler(handler)
	return err
}

// getEndpointSlices returns the EndpointSlices of a Service from the informer cache.
func (c *clientWrapper) getEndpointSlices(namespace, serviceName string) ([]*discoveryv1.EndpointSlice, error) {
	if !c.isWatchedNamespace(namespace) {
		return nil, fmt.Errorf("getting endpointslices of service %s/%s: namespace is not within watched namespaces", namespace, serviceName)
	}

	informer := c.factoriesKube[c.lookupNamespace(namespace)].Discovery().V1().EndpointSlices().Informer()
	return k8s.EndpointSlicesByServiceName(informer.GetIndexer(), namespace, serviceName)
}

// buildServers replaces upstream's ClusterIP server: one server per ready endpoint of the split's Service.
// A Service without ready endpoints yields no servers, so Traefik answers 503 until a pod is ready.
func (p *Provider) buildServers(namespace, serviceName string, port intstr.IntOrString) ([]dynamic.Server, error) {
	service, err := p.client.GetService(namespace, serviceName)
	if err != nil {
		return nil, fmt.Errorf("getting service %s/%s: %w", namespace, serviceName, err)
	}

	svcPort := findServicePort(service, port)
	if svcPort == nil {
		return nil, fmt.Errorf("service %s/%s has no port %s", namespace, serviceName, port.String())
	}

	// An ExternalName Service has no endpoints to route to, and following its DNS name would leave the cluster.
	if service.Spec.Type == corev1.ServiceTypeExternalName {
		return nil, fmt.Errorf("service %s/%s is an ExternalName service, which has no endpoints", namespace, serviceName)
	}

	endpointSlices, err := p.client.getEndpointSlices(namespace, serviceName)
	if err != nil {
		return nil, err
	}

	return endpointServers(*svcPort, endpointSlices), nil
}

// findServicePort matches a split's servicePort as upstream does: by port name, or by port number.
func findServicePort(service *corev1.Service, port intstr.IntOrString) *corev1.ServicePort {
	for i, sp := range service.Spec.Ports {
		if sp.Name == port.String() || strconv.Itoa(int(sp.Port)) == port.String() {
			return &service.Spec.Ports[i]
		}
	}
	return nil
}

// endpointServers lists one server per ready address of the given slices, for the slice port that carries svcPort.
// The list is sorted so that an unchanged set of endpoints hashes to an unchanged configuration.
func endpointServers(svcPort corev1.ServicePort, endpointSlices []*discoveryv1.EndpointSlice) []dynamic.Server {
	scheme := "http"
	if svcPort.AppProtocol != nil && *svcPort.AppProtocol == knativenetworking.AppProtocolH2C {
		scheme = "h2c"
	}

	var urls []string
	for _, endpointSlice := range endpointSlices {
		// FQDN slices name hosts rather than pods.
		if endpointSlice.AddressType != discoveryv1.AddressTypeIPv4 && endpointSlice.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}

		port, ok := slicePort(svcPort, endpointSlice.Ports)
		if !ok {
			continue
		}

		for _, endpoint := range endpointSlice.Endpoints {
			// Ready is false for a pod that fails its readiness probe or is terminating; nil means ready.
			if endpoint.Conditions.Ready != nil && !*endpoint.Conditions.Ready {
				continue
			}
			// Only the first address has a meaning (the EndpointSlice API defines none for the others).
			if len(endpoint.Addresses) == 0 {
				continue
			}
			u := scheme + "://" + net.JoinHostPort(endpoint.Addresses[0], strconv.Itoa(int(port)))
			// The same pod can briefly appear in two slices while the controller moves it.
			if !slices.Contains(urls, u) {
				urls = append(urls, u)
			}
		}
	}
	slices.Sort(urls)

	servers := make([]dynamic.Server, 0, len(urls))
	for _, u := range urls {
		servers = append(servers, dynamic.Server{URL: u})
	}
	return servers
}

// slicePort finds the port number of svcPort in a slice. The EndpointSlice controller names slice ports after the
// Service ports and resolves their targetPort, so the name decides; an unnamed Service port also matches a slice
// port by its targetPort number, which is how a hand-written slice for a selector-less Service may list it.
func slicePort(svcPort corev1.ServicePort, ports []discoveryv1.EndpointPort) (int32, bool) {
	target := svcPort.TargetPort
	targetNumber := svcPort.Port
	if target.Type == intstr.Int && target.IntVal != 0 {
		targetNumber = target.IntVal
	}

	for _, p := range ports {
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		if name != svcPort.Name {
			continue
		}
		if p.Port != nil {
			return *p.Port, true
		}
		// No port number means all ports: the numeric targetPort is the one to use.
		if target.Type == intstr.String && target.StrVal != "" {
			return 0, false
		}
		return targetNumber, true
	}

	if svcPort.Name == "" && (target.Type == intstr.Int || target.StrVal == "") {
		for _, p := range ports {
			if p.Port != nil && *p.Port == targetNumber {
				return *p.Port, true
			}
		}
	}
	return 0, false
}
