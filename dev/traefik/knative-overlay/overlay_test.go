package knative

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/traefik/traefik/v3/pkg/config/dynamic"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	kubefake "k8s.io/client-go/kubernetes/fake"
	knativenetworking "knative.dev/networking/pkg/apis/networking"
	knativenetworkingv1alpha1 "knative.dev/networking/pkg/apis/networking/v1alpha1"
	knfake "knative.dev/networking/pkg/client/clientset/versioned/fake"
	"knative.dev/pkg/apis"
)

const testNS = "ns"

func endpoint(ip string, ready *bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
}

func slice(name, service string, addressType discoveryv1.AddressType, ports []discoveryv1.EndpointPort, endpoints ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: testNS, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: addressType,
		Ports:       ports,
		Endpoints:   endpoints,
	}
}

func namedPort(name string, port int32) discoveryv1.EndpointPort {
	return discoveryv1.EndpointPort{Name: new(name), Port: new(port)}
}

func urls(servers []dynamic.Server) []string {
	out := make([]string, 0, len(servers))
	for _, s := range servers {
		out = append(out, s.URL)
	}
	return out
}

func TestOverlayEndpointServers(t *testing.T) {
	httpPort := corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}
	ports := []discoveryv1.EndpointPort{namedPort("metrics", 9090), namedPort("http", 8080)}

	slices := []*discoveryv1.EndpointSlice{
		slice("a", "svc", discoveryv1.AddressTypeIPv4, ports,
			endpoint("10.0.0.2", new(true)),
			endpoint("10.0.0.1", nil),        // nil means ready
			endpoint("10.0.0.3", new(false)), // failing its readiness probe, or terminating
			endpoint("10.0.0.2", new(true))), // listed twice while moving between slices
		slice("b", "svc", discoveryv1.AddressTypeIPv6, ports, endpoint("fd00::1", new(true))),
		slice("c", "svc", discoveryv1.AddressTypeFQDN, ports, endpoint("pod.example", new(true))),
		slice("d", "svc", discoveryv1.AddressTypeIPv4, []discoveryv1.EndpointPort{namedPort("other", 1)}, endpoint("10.0.0.9", new(true))),
	}

	assert.Equal(t, []string{"http://10.0.0.1:8080", "http://10.0.0.2:8080", "http://[fd00::1]:8080"}, urls(endpointServers(httpPort, slices)))

	h2c := httpPort
	h2c.AppProtocol = new(knativenetworking.AppProtocolH2C)
	assert.Equal(t, []string{"h2c://10.0.0.1:8080", "h2c://10.0.0.2:8080", "h2c://[fd00::1]:8080"}, urls(endpointServers(h2c, slices)))

	// No ready endpoint: no servers (Traefik answers 503), never nil so that the configuration says so explicitly.
	none := endpointServers(httpPort, []*discoveryv1.EndpointSlice{slice("a", "svc", discoveryv1.AddressTypeIPv4, ports, endpoint("10.0.0.3", new(false)))})
	assert.NotNil(t, none)
	assert.Empty(t, none)
}

func TestOverlaySlicePort(t *testing.T) {
	unnamed := corev1.ServicePort{Port: 80, TargetPort: intstr.FromInt32(8080)}

	port, ok := slicePort(unnamed, []discoveryv1.EndpointPort{namedPort("", 8080)})
	assert.True(t, ok)
	assert.Equal(t, int32(8080), port)

	// A hand-written slice may name the port; the targetPort number still identifies it.
	port, ok = slicePort(unnamed, []discoveryv1.EndpointPort{namedPort("web", 8080)})
	assert.True(t, ok)
	assert.Equal(t, int32(8080), port)

	_, ok = slicePort(unnamed, []discoveryv1.EndpointPort{namedPort("web", 9090)})
	assert.False(t, ok)

	// A named Service port is found by name only: the slice's number is the resolved targetPort.
	port, ok = slicePort(corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromString("web")}, []discoveryv1.EndpointPort{namedPort("http", 3000)})
	assert.True(t, ok)
	assert.Equal(t, int32(3000), port)

	_, ok = slicePort(corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}, []discoveryv1.EndpointPort{namedPort("", 8080)})
	assert.False(t, ok)
}

func TestOverlayCombine(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"", "", ""}, {"/api", "", "/api"}, {"", "/v1", "/v1"}, {"/api", "/api/v1", "/api/v1"}, {"/api/v1", "/api", "/api/v1"},
	} {
		got, ok := combinePathPrefix(tc.a, tc.b)
		assert.True(t, ok)
		assert.Equal(t, tc.want, got)
	}
	_, ok := combinePathPrefix("/a", "/b")
	assert.False(t, ok)

	tag := map[string]knativenetworkingv1alpha1.HeaderMatch{"Knative-Serving-Tag": {Exact: "v1"}}
	got, ok := combineHeaderMatches(nil, tag)
	assert.True(t, ok)
	assert.Equal(t, tag, got)

	_, ok = combineHeaderMatches(map[string]knativenetworkingv1alpha1.HeaderMatch{"knative-serving-tag": {Exact: "v2"}}, tag)
	assert.False(t, ok)
}

func ingress(name string, generation int64, rules ...knativenetworkingv1alpha1.IngressRule) *knativenetworkingv1alpha1.Ingress {
	return &knativenetworkingv1alpha1.Ingress{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: testNS, Generation: generation,
			Annotations: map[string]string{knativenetworking.IngressClassAnnotationKey: traefikIngressClassName},
		},
		Spec: knativenetworkingv1alpha1.IngressSpec{Rules: rules},
	}
}

func rule(visibility knativenetworkingv1alpha1.IngressVisibility, hosts []string, paths ...knativenetworkingv1alpha1.HTTPIngressPath) knativenetworkingv1alpha1.IngressRule {
	return knativenetworkingv1alpha1.IngressRule{Hosts: hosts, Visibility: visibility, HTTP: &knativenetworkingv1alpha1.HTTPIngressRuleValue{Paths: paths}}
}

func split(service string, percent int, headers map[string]string) knativenetworkingv1alpha1.IngressBackendSplit {
	return knativenetworkingv1alpha1.IngressBackendSplit{
		IngressBackend: knativenetworkingv1alpha1.IngressBackend{ServiceNamespace: testNS, ServiceName: service, ServicePort: intstr.FromString("http")},
		Percent:        percent,
		AppendHeaders:  headers,
	}
}

// applyAsTraefik is what Traefik's configuration watcher hands its listeners: a deep copy, names qualified.
func applyAsTraefik(conf *dynamic.Configuration) dynamic.Configuration {
	c := conf.DeepCopy()
	out := dynamic.HTTPConfiguration{Routers: map[string]*dynamic.Router{}, Middlewares: map[string]*dynamic.Middleware{}, Services: map[string]*dynamic.Service{}}
	for k, v := range c.HTTP.Routers {
		out.Routers[k+"@"+ProviderName] = v
	}
	for k, v := range c.HTTP.Middlewares {
		out.Middlewares[k+"@"+ProviderName] = v
	}
	for k, v := range c.HTTP.Services {
		out.Services[k+"@"+ProviderName] = v
	}
	out.Routers["dashboard@internal"] = &dynamic.Router{Rule: "PathPrefix(`/api`)", Service: "api@internal"}
	return dynamic.Configuration{HTTP: &out}
}

func condition(ing *knativenetworkingv1alpha1.Ingress, t apis.ConditionType) string {
	c := ing.Status.GetCondition(t)
	if c == nil {
		return ""
	}
	return string(c.Status) + "/" + c.Reason
}

func TestOverlayProvider(t *testing.T) {
	// The knative informers do not support watch-list semantics, with which the fake clients hang.
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)

	svc := func(name string) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS},
			Spec:       corev1.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
		}
	}
	placeholder := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "placeholder", Namespace: testNS},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "traefik-private.tidal-ingress.svc.cluster.local", Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	ports := []discoveryv1.EndpointPort{namedPort("http", 8080)}
	k8sObjects := []runtime.Object{
		svc("blue"), svc("green"), svc("idle"), placeholder,
		slice("blue-1", "blue", discoveryv1.AddressTypeIPv4, ports, endpoint("10.250.0.11", new(true)), endpoint("10.250.0.12", new(false))),
		slice("green-1", "green", discoveryv1.AddressTypeIPv4, ports, endpoint("10.250.0.21", new(true))),
	}

	const local = "hello.ns.svc.cluster.local"
	tagPath := knativenetworkingv1alpha1.HTTPIngressPath{
		Headers:       map[string]knativenetworkingv1alpha1.HeaderMatch{"Knative-Serving-Tag": {Exact: "green"}},
		Splits:        []knativenetworkingv1alpha1.IngressBackendSplit{split("green", 100, nil)},
		AppendHeaders: map[string]string{"Knative-Serving-Tag": "green"},
	}
	defaultPath := knativenetworkingv1alpha1.HTTPIngressPath{
		Splits: []knativenetworkingv1alpha1.IngressBackendSplit{split("blue", 90, map[string]string{"Knative-Serving-Revision": "blue"}), split("green", 10, nil)},
	}
	route := ingress("hello", 1,
		rule(knativenetworkingv1alpha1.IngressVisibilityExternalIP, []string{"hello.example.com"}, tagPath, defaultPath),
		rule(knativenetworkingv1alpha1.IngressVisibilityClusterLocal, []string{local}, tagPath, defaultPath))
	mapping := ingress("mapping", 1, rule(knativenetworkingv1alpha1.IngressVisibilityExternalIP, []string{"hello.example.org"},
		knativenetworkingv1alpha1.HTTPIngressPath{RewriteHost: local, Splits: []knativenetworkingv1alpha1.IngressBackendSplit{split("placeholder", 100, map[string]string{"K-Original-Host": "hello.example.org"})}}))
	lost := ingress("lost", 1, rule(knativenetworkingv1alpha1.IngressVisibilityExternalIP, []string{"lost.example.org"},
		knativenetworkingv1alpha1.HTTPIngressPath{RewriteHost: "nowhere.ns.svc.cluster.local", Splits: []knativenetworkingv1alpha1.IngressBackendSplit{split("placeholder", 100, nil)}}))
	broken := ingress("broken", 1, rule(knativenetworkingv1alpha1.IngressVisibilityExternalIP, []string{"broken.example.com"},
		knativenetworkingv1alpha1.HTTPIngressPath{Splits: []knativenetworkingv1alpha1.IngressBackendSplit{split("missing", 100, nil)}},
		knativenetworkingv1alpha1.HTTPIngressPath{Path: "/idle", Splits: []knativenetworkingv1alpha1.IngressBackendSplit{split("idle", 100, nil)}}))

	knClient := knfake.NewSimpleClientset(route, mapping, lost, broken)
	client := newClientImpl(knClient, kubefake.NewClientset(k8sObjects...))
	_, err := client.WatchAll(nil, t.Context().Done())
	require.NoError(t, err)

	p := &Provider{
		PublicEntrypoints:  []string{"web"},
		PrivateEntrypoints: []string{"private"},
		PrivateService:     ServiceRef{Name: "traefik-private", Namespace: "tidal-ingress"},
		client:             client,
	}
	conf, statuses := p.loadConfiguration(t.Context())
	require.Len(t, statuses, 4)
	http := conf.HTTP

	// Pod endpoints, ready ones only; the split headers stay on the WRR.
	assert.Equal(t, []string{"http://10.250.0.11:8080"}, urls(http.Services["ns-hello-rule-0-path-1-split-0"].LoadBalancer.Servers))
	assert.Equal(t, []string{"http://10.250.0.21:8080"}, urls(http.Services["ns-hello-rule-0-path-1-split-1"].LoadBalancer.Servers))
	wrr := http.Services["ns-hello-rule-0-path-1-wrr"].Weighted
	require.Len(t, wrr.Services, 2)
	assert.Equal(t, 90, *wrr.Services[0].Weight)
	assert.Equal(t, map[string]string{"Knative-Serving-Revision": "blue"}, wrr.Services[0].Headers)
	assert.Equal(t, []string{"private"}, http.Routers["ns-hello-rule-1-path-1"].EntryPoints)

	// rewriteHost: one router per path of the target rule, on the mapping's host and entry points, with the target's
	// splits and Host rewritten; the placeholder (ExternalName) is not used.
	tagRouter := http.Routers["ns-mapping-rule-0-path-0-rewrite-0"]
	require.NotNil(t, tagRouter)
	assert.Equal(t, `(Host("hello.example.org")) && (Header("Knative-Serving-Tag","green"))`, tagRouter.Rule)
	assert.Equal(t, []string{"web"}, tagRouter.EntryPoints)
	assert.Equal(t, map[string]string{"Host": local, "K-Original-Host": "hello.example.org", "Knative-Serving-Tag": "green"},
		http.Middlewares["ns-mapping-rule-0-path-0-rewrite-0-append-headers"].Headers.CustomRequestHeaders)
	defaultRouter := http.Routers["ns-mapping-rule-0-path-0-rewrite-1"]
	require.NotNil(t, defaultRouter)
	assert.Equal(t, `(Host("hello.example.org"))`, defaultRouter.Rule)
	assert.Len(t, http.Services["ns-mapping-rule-0-path-0-rewrite-1-wrr"].Weighted.Services, 2)
	assert.NotContains(t, http.Routers, "ns-mapping-rule-0-path-0")

	// rewriteHost to a host no KIngress serves: 503 (a service without servers).
	assert.Empty(t, http.Services["ns-lost-rule-0-path-0-wrr"].LoadBalancer.Servers)

	// A missing Service drops its path as upstream does; a Service without ready endpoints is routed (503).
	assert.NotContains(t, http.Routers, "ns-broken-rule-0-path-0")
	assert.Empty(t, http.Services["ns-broken-rule-0-path-1-split-0"].LoadBalancer.Servers)

	// Status: nothing is Ready before Traefik applied the configuration; failures are reported at once.
	p.publishStatuses(statuses)
	for _, st := range p.overlay.pending {
		result, message := evaluate(st.build, nil)
		switch st.ingress.Name {
		case "hello", "mapping":
			assert.Equal(t, outcomeWaiting, result, st.ingress.Name)
		case "lost":
			assert.Equal(t, outcomeFailed, result)
			assert.Contains(t, message, `rewriteHost "nowhere.ns.svc.cluster.local"`)
		case "broken":
			assert.Equal(t, outcomeFailed, result)
			assert.Contains(t, message, "rule 0 path 0")
			assert.Contains(t, message, `"missing" not found`)
		}
	}

	// Applied: the built routes are live.
	ConfigurationApplied(applyAsTraefik(conf)) // no listener registered: ignored
	p.overlay.setApplied(providerRoutes(applyAsTraefik(conf).HTTP))
	assert.False(t, p.writeStatuses(context.Background()))

	get := func(name string) *knativenetworkingv1alpha1.Ingress {
		ing, err := knClient.NetworkingV1alpha1().Ingresses(testNS).Get(t.Context(), name, metav1.GetOptions{})
		require.NoError(t, err)
		return ing
	}
	for _, name := range []string{"hello", "mapping"} {
		ing := get(name)
		assert.Equal(t, "True/", condition(ing, knativenetworkingv1alpha1.IngressConditionReady), name)
		assert.Equal(t, int64(1), ing.Status.ObservedGeneration)
		assert.Equal(t, "traefik-private.tidal-ingress.svc.cluster.local", ing.Status.PrivateLoadBalancer.Ingress[0].DomainInternal)
	}
	for _, name := range []string{"lost", "broken"} {
		ing := get(name)
		assert.Equal(t, "False/"+reasonReconcileFailed, condition(ing, knativenetworkingv1alpha1.IngressConditionReady), name)
		assert.Equal(t, "False/"+reasonReconcileFailed, condition(ing, knativenetworkingv1alpha1.IngressConditionNetworkConfigured), name)
		assert.Equal(t, "Unknown/Uninitialized", condition(ing, knativenetworkingv1alpha1.IngressConditionLoadBalancerReady), name)
		assert.True(t, strings.HasPrefix(ing.Status.GetCondition(knativenetworkingv1alpha1.IngressConditionReady).Message, "rule 0 path 0: "))
	}

	// A new build that Traefik has not applied yet (other weights) waits, even though the router names exist.
	var hello ingressBuild
	for _, st := range p.overlay.pending {
		if st.ingress.Name == "hello" {
			hello = st.build
		}
	}
	changed := ingressBuild{routers: hello.routers, middlewares: hello.middlewares, services: map[string]*dynamic.Service{}}
	for k, v := range hello.services {
		changed.services[k] = v.DeepCopy()
		if w := changed.services[k].Weighted; w != nil && len(w.Services) > 1 {
			w.Services[0].Weight = new(50)
		}
	}
	result, _ := evaluate(hello, p.overlay.applied)
	assert.Equal(t, outcomeReady, result)
	result, _ = evaluate(changed, p.overlay.applied)
	assert.Equal(t, outcomeWaiting, result)
}

func TestOverlaySameRouter(t *testing.T) {
	want := &dynamic.Router{EntryPoints: []string{"web"}, Rule: `Host("a")`, Service: "x-wrr", Middlewares: []string{"x-append-headers"}}
	got := want.DeepCopy()
	got.Service = "x-wrr@knative"
	got.Middlewares = []string{"x-append-headers@knative"}
	assert.True(t, sameRouter(want, got))

	got.EntryPoints = []string{"private"}
	assert.False(t, sameRouter(want, got))
}

func TestOverlayRedirected(t *testing.T) {
	newConf := func() *dynamic.HTTPConfiguration {
		return &dynamic.HTTPConfiguration{Routers: map[string]*dynamic.Router{}, Middlewares: map[string]*dynamic.Middleware{}, Services: map[string]*dynamic.Service{}}
	}
	route := pathRoute{hosts: []string{"hello.example.com"}, appendHeaders: map[string]string{"K-Test": "1"}}
	ing := ingress("hello", 1, rule(knativenetworkingv1alpha1.IngressVisibilityExternalIP, []string{"hello.example.com"}))
	ing.Spec.TLS = []knativenetworkingv1alpha1.IngressTLS{{Hosts: []string{"hello.example.com"}, SecretName: "cert", SecretNamespace: testNS}}

	// TLS with HTTP enabled: the plain router and its TLS twin serve alike.
	conf := newConf()
	addRouter(conf, ing, "k", []string{"web"}, route, &dynamic.Service{})
	assert.Equal(t, []string{"k-append-headers"}, conf.Routers["k"].Middlewares)
	assert.Equal(t, []string{"k-append-headers"}, conf.Routers["k-tls"].Middlewares)

	// Redirected: plain HTTP redirects to https, permanently; the TLS twin serves.
	ing.Spec.HTTPOption = knativenetworkingv1alpha1.HTTPOptionRedirected
	conf = newConf()
	addRouter(conf, ing, "k", []string{"web"}, route, &dynamic.Service{})
	assert.Equal(t, []string{"k-redirect-https", "k-append-headers"}, conf.Routers["k"].Middlewares)
	assert.Equal(t, &dynamic.RedirectScheme{Scheme: "https", Permanent: true}, conf.Middlewares["k-redirect-https"].RedirectScheme)
	assert.Equal(t, []string{"k-append-headers"}, conf.Routers["k-tls"].Middlewares)
	assert.NotNil(t, conf.Routers["k-tls"].TLS)

	// Redirected without TLS: nothing to redirect to.
	ing.Spec.TLS = nil
	conf = newConf()
	addRouter(conf, ing, "k", []string{"web"}, route, &dynamic.Service{})
	assert.Equal(t, []string{"k-append-headers"}, conf.Routers["k"].Middlewares)
	assert.Nil(t, conf.Routers["k-tls"])
}
