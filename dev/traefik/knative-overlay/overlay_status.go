package knative

// KIngress status that means "routed". Upstream marks every KIngress of its class Ready right after handing the
// configuration to the provider aggregator, before Traefik has built its routers, and even when some of its paths
// could not be built. Here the provider remembers what it built for each KIngress; Traefik's configuration watcher
// calls ConfigurationApplied once the routers of a configuration serve (its listener runs after the router switch),
// and a KIngress is marked Ready once the applied configuration holds exactly the routers, middlewares and services
// built for its current generation. A KIngress with a path that could not be built is marked not ready at once.
// Each Traefik writes for itself, as upstream does: with several of them watching one KIngress, Ready means that the
// first of them routes it.

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog/log"
	"github.com/traefik/traefik/v3/pkg/config/dynamic"
	"github.com/traefik/traefik/v3/pkg/safe"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	knativenetworkingv1alpha1 "knative.dev/networking/pkg/apis/networking/v1alpha1"
	"knative.dev/pkg/network"
)

const (
	// reasonReconcileFailed is the reason Knative's ingress reconcilers give when they cannot program a KIngress.
	reasonReconcileFailed = "ReconcileIngressFailed"
	// statusRetryDelay is how soon a failed status write is tried again when no informer event would do it.
	statusRetryDelay = 5 * time.Second
	// maxMessageLength keeps a condition message readable when many paths fail.
	maxMessageLength = 1024
)

// ingressBuild is what buildRouters produced for one KIngress.
type ingressBuild struct {
	routers     map[string]*dynamic.Router
	middlewares map[string]*dynamic.Middleware
	services    map[string]*dynamic.Service
	problems    []string
}

// ingressStatus is a KIngress (the informer's object, never modified) and what was built for it.
type ingressStatus struct {
	ingress *knativenetworkingv1alpha1.Ingress
	build   ingressBuild
}

// appliedRoutes is the provider's part of the configuration Traefik last applied, under unqualified names.
type appliedRoutes struct {
	routers     map[string]*dynamic.Router
	middlewares map[string]*dynamic.Middleware
	services    map[string]*dynamic.Service
}

// overlayState holds the status bookkeeping of one provider; the zero value is ready for use.
type overlayState struct {
	mu sync.Mutex
	// building collects the builds of the configuration being loaded, keyed by namespace/name.
	building map[string]ingressBuild
	// pending is the KIngresses of the last loaded configuration, whose status the writer keeps up to date.
	pending []ingressStatus
	applied *appliedRoutes
	// written maps a KIngress to the resourceVersion its last status write started from: until the informer
	// delivers a newer object, the cache still shows the old status and must not cause a second write.
	written map[string]string
	wake    chan struct{}
}

type outcome int

const (
	outcomeWaiting outcome = iota
	outcomeReady
	outcomeFailed
)

func ingressKey(ingress *knativenetworkingv1alpha1.Ingress) string {
	return ingress.Namespace + "/" + ingress.Name
}

func (s *overlayState) recordBuild(ingress *knativenetworkingv1alpha1.Ingress, conf *dynamic.HTTPConfiguration, problems []string) {
	s.mu.Lock()
	defer s.mu.Unlock()

	if s.building == nil {
		s.building = make(map[string]ingressBuild)
	}
	s.building[ingressKey(ingress)] = ingressBuild{
		routers:     conf.Routers,
		middlewares: conf.Middlewares,
		services:    conf.Services,
		problems:    problems,
	}
}

// publishStatuses takes over from upstream's status loop: the KIngresses of the configuration just loaded become
// the ones whose status the writer maintains. The built objects are those sent to Traefik, which only reads them.
func (p *Provider) publishStatuses(ingresses []*knativenetworkingv1alpha1.Ingress) {
	s := &p.overlay
	s.mu.Lock()
	pending := make([]ingressStatus, 0, len(ingresses))
	keys := make(map[string]bool, len(ingresses))
	for _, ingress := range ingresses {
		if build, ok := s.building[ingressKey(ingress)]; ok {
			pending = append(pending, ingressStatus{ingress: ingress, build: build})
			keys[ingressKey(ingress)] = true
		}
	}
	s.pending = pending
	s.building = nil
	// Forget the KIngresses that are gone.
	for key := range s.written {
		if !keys[key] {
			delete(s.written, key)
		}
	}
	s.mu.Unlock()

	s.signal()
}

func (s *overlayState) setApplied(applied *appliedRoutes) {
	s.mu.Lock()
	s.applied = applied
	s.mu.Unlock()

	s.signal()
}

func (s *overlayState) signal() {
	s.mu.Lock()
	wake := s.wake
	s.mu.Unlock()

	if wake == nil {
		return
	}
	select {
	case wake <- struct{}{}:
	default:
	}
}

// appliedListeners are the running providers that ConfigurationApplied informs.
var appliedListeners struct {
	sync.Mutex
	providers []*Provider
}

// ConfigurationApplied is a listener of Traefik's configuration watcher, registered after the one that switches the
// entry points to the new routers: when it runs, the configuration it receives is what Traefik serves.
func ConfigurationApplied(conf dynamic.Configuration) {
	appliedListeners.Lock()
	providers := slices.Clone(appliedListeners.providers)
	appliedListeners.Unlock()

	if len(providers) == 0 || conf.HTTP == nil {
		return
	}

	applied := providerRoutes(conf.HTTP)
	for _, p := range providers {
		p.overlay.setApplied(applied)
	}
}

// providerRoutes extracts this provider's routers, middlewares and services from a merged configuration, under the
// names the provider gave them. They are copied because Traefik keeps using the configuration it applied.
func providerRoutes(conf *dynamic.HTTPConfiguration) *appliedRoutes {
	suffix := "@" + ProviderName
	applied := &appliedRoutes{
		routers:     make(map[string]*dynamic.Router),
		middlewares: make(map[string]*dynamic.Middleware),
		services:    make(map[string]*dynamic.Service),
	}
	for name, router := range conf.Routers {
		if local, ok := strings.CutSuffix(name, suffix); ok {
			applied.routers[local] = router.DeepCopy()
		}
	}
	for name, middleware := range conf.Middlewares {
		if local, ok := strings.CutSuffix(name, suffix); ok {
			applied.middlewares[local] = middleware.DeepCopy()
		}
	}
	for name, service := range conf.Services {
		if local, ok := strings.CutSuffix(name, suffix); ok {
			applied.services[local] = service.DeepCopy()
		}
	}
	return applied
}

// evaluate tells whether a KIngress is routed as built (ready), cannot be (failed), or is not applied yet.
func evaluate(build ingressBuild, applied *appliedRoutes) (outcome, string) {
	if len(build.problems) > 0 {
		message := strings.Join(build.problems, "; ")
		if len(message) > maxMessageLength {
			message = message[:maxMessageLength] + "…"
		}
		return outcomeFailed, message
	}
	if applied == nil {
		return outcomeWaiting, ""
	}

	for name, want := range build.routers {
		got, ok := applied.routers[name]
		if !ok || !sameRouter(want, got) {
			return outcomeWaiting, ""
		}
	}
	for name, want := range build.middlewares {
		if got, ok := applied.middlewares[name]; !ok || !reflect.DeepEqual(want, got) {
			return outcomeWaiting, ""
		}
	}
	for name, want := range build.services {
		if got, ok := applied.services[name]; !ok || !reflect.DeepEqual(want, got) {
			return outcomeWaiting, ""
		}
	}
	return outcomeReady, ""
}

// sameRouter compares what a router matches and where it sends requests. Traefik fills in other fields (resolved
// TLS options) and may qualify references with the provider name while applying a configuration.
func sameRouter(want, got *dynamic.Router) bool {
	unqualified := func(names []string) []string {
		out := make([]string, len(names))
		for i, name := range names {
			out[i] = strings.TrimSuffix(name, "@"+ProviderName)
		}
		return out
	}

	return want.Rule == got.Rule &&
		strings.TrimSuffix(want.Service, "@"+ProviderName) == strings.TrimSuffix(got.Service, "@"+ProviderName) &&
		slices.Equal(want.EntryPoints, got.EntryPoints) &&
		slices.Equal(unqualified(want.Middlewares), unqualified(got.Middlewares)) &&
		(want.TLS == nil) == (got.TLS == nil)
}

// desiredStatus is a copy of the KIngress with the status of the given outcome for its current generation.
func (p *Provider) desiredStatus(ingress *knativenetworkingv1alpha1.Ingress, result outcome, message string) *knativenetworkingv1alpha1.Ingress {
	out := ingress.DeepCopy()
	switch result {
	case outcomeReady:
		public, private := p.loadBalancers()
		out.Status.MarkNetworkConfigured()
		out.Status.MarkLoadBalancerReady(public, private)
	case outcomeFailed:
		out.GetConditionSet().Manage(&out.Status).MarkFalse(knativenetworkingv1alpha1.IngressConditionNetworkConfigured, reasonReconcileFailed, "%s", message)
		out.Status.MarkLoadBalancerNotReady()
	}
	out.Status.ObservedGeneration = out.Generation
	return out
}

// loadBalancers are the addresses upstream writes into the status (publicService and privateService).
func (p *Provider) loadBalancers() ([]knativenetworkingv1alpha1.LoadBalancerIngressStatus, []knativenetworkingv1alpha1.LoadBalancerIngressStatus) {
	var publicLbs, privateLbs []knativenetworkingv1alpha1.LoadBalancerIngressStatus
	if p.PublicService.Name != "" && p.PublicService.Namespace != "" {
		publicLbs = append(publicLbs, knativenetworkingv1alpha1.LoadBalancerIngressStatus{
			DomainInternal: network.GetServiceHostname(p.PublicService.Name, p.PublicService.Namespace),
		})
	}
	if p.PrivateService.Name != "" && p.PrivateService.Namespace != "" {
		privateLbs = append(privateLbs, knativenetworkingv1alpha1.LoadBalancerIngressStatus{
			DomainInternal: network.GetServiceHostname(p.PrivateService.Name, p.PrivateService.Namespace),
		})
	}
	return publicLbs, privateLbs
}

// startStatusWriter runs the status writes apart from the provider loop and from the configuration watcher, so
// that neither waits for the API server.
func (p *Provider) startStatusWriter(ctx context.Context, pool *safe.Pool) {
	wake := make(chan struct{}, 1)
	p.overlay.mu.Lock()
	p.overlay.wake = wake
	p.overlay.mu.Unlock()

	appliedListeners.Lock()
	appliedListeners.providers = append(appliedListeners.providers, p)
	appliedListeners.Unlock()

	pool.GoCtx(func(ctxPool context.Context) {
		defer func() {
			appliedListeners.Lock()
			appliedListeners.providers = slices.DeleteFunc(appliedListeners.providers, func(q *Provider) bool { return q == p })
			appliedListeners.Unlock()
		}()

		retry := time.NewTimer(statusRetryDelay)
		retry.Stop()
		for {
			select {
			case <-ctxPool.Done():
				retry.Stop()
				return
			case <-wake:
			case <-retry.C:
			}
			if p.writeStatuses(ctx) {
				retry.Reset(statusRetryDelay)
			}
		}
	})
}

// writeStatuses brings the status of every pending KIngress up to date; it reports whether a write should be tried
// again later.
func (p *Provider) writeStatuses(ctx context.Context) bool {
	logger := log.Ctx(ctx)
	s := &p.overlay

	s.mu.Lock()
	pending := s.pending
	applied := s.applied
	s.mu.Unlock()

	retry := false
	for _, st := range pending {
		result, message := evaluate(st.build, applied)
		if result == outcomeWaiting {
			continue
		}

		want := p.desiredStatus(st.ingress, result, message)
		if apiequality.Semantic.DeepEqual(st.ingress.Status, want.Status) {
			continue
		}

		key := ingressKey(st.ingress)
		s.mu.Lock()
		basedOn, wrote := s.written[key]
		s.mu.Unlock()
		if wrote && basedOn == st.ingress.ResourceVersion {
			continue
		}

		if err := p.client.UpdateIngressStatus(want); err != nil {
			// A conflict means a newer object is on its way through the informer, whose event brings it back here.
			if !apierrors.IsConflict(err) {
				retry = true
			}
			logger.Error().Err(err).Msgf("Error updating status for Ingress %s", key)
			continue
		}

		s.mu.Lock()
		if s.written == nil {
			s.written = make(map[string]string)
		}
		s.written[key] = st.ingress.ResourceVersion
		s.mu.Unlock()

		if result == outcomeFailed {
			logger.Warn().Msgf("Ingress %s is not ready: %s", key, message)
		}
	}
	return retry
}

// String helps log lines and test failures.
func (o outcome) String() string {
	switch o {
	case outcomeReady:
		return "ready"
	case outcomeFailed:
		return "failed"
	default:
		return "waiting"
	}
}
