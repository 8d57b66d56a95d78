package knative

// Routers of a KIngress: upstream's translation (one router per rule and path, a weighted round robin over the
// splits, path-level appendHeaders as a headers middleware, a TLS twin), extended with rewriteHost and with a record
// of what failed, which decides the KIngress's status (overlay_status.go).

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rs/zerolog/log"
	"github.com/traefik/traefik/v3/pkg/config/dynamic"
	knativenetworking "knative.dev/networking/pkg/apis/networking"
	knativenetworkingv1alpha1 "knative.dev/networking/pkg/apis/networking/v1alpha1"
)

// pathRoute is what one router matches and where it sends the request.
type pathRoute struct {
	hosts         []string
	headers       map[string]knativenetworkingv1alpha1.HeaderMatch
	path          string
	appendHeaders map[string]string
	splits        []knativenetworkingv1alpha1.IngressBackendSplit
}

// buildRouters replaces upstream's: same routers, plus rewriteHost, and every path that cannot be routed is recorded
// so that the KIngress is not reported Ready.
func (p *Provider) buildRouters(ctx context.Context, ingress *knativenetworkingv1alpha1.Ingress) *dynamic.HTTPConfiguration {
	logger := log.Ctx(ctx).With().Logger()

	conf := &dynamic.HTTPConfiguration{
		Routers:     make(map[string]*dynamic.Router),
		Middlewares: make(map[string]*dynamic.Middleware),
		Services:    make(map[string]*dynamic.Service),
	}

	var problems []string
	fail := func(err error) {
		logger.Error().Err(err).Msg("Error building the routes of a KIngress")
		problems = append(problems, err.Error())
	}

	for ri, rule := range ingress.Spec.Rules {
		if rule.HTTP == nil {
			logger.Debug().Msgf("No HTTP rule defined for rule %d in Ingress %s", ri, ingress.Name)
			continue
		}

		entrypoints := p.PublicEntrypoints
		if rule.Visibility == knativenetworkingv1alpha1.IngressVisibilityClusterLocal {
			if p.PrivateEntrypoints == nil {
				fail(fmt.Errorf("rule %d is ClusterLocal but no privateEntrypoints are configured", ri))
				continue
			}
			entrypoints = p.PrivateEntrypoints
		}

		for pi, path := range rule.HTTP.Paths {
			routerKey := fmt.Sprintf("%s-%s-rule-%d-path-%d", ingress.Namespace, ingress.Name, ri, pi)
			route := pathRoute{
				hosts:         rule.Hosts,
				headers:       path.Headers,
				path:          path.Path,
				appendHeaders: path.AppendHeaders,
				splits:        path.Splits,
			}

			if path.RewriteHost == "" {
				if err := p.addPathRouter(conf, ingress, routerKey, entrypoints, route); err != nil {
					fail(fmt.Errorf("rule %d path %d: %w", ri, pi, err))
				}
				continue
			}

			for _, err := range p.addRewriteRouters(conf, ingress, routerKey, entrypoints, route, path.RewriteHost) {
				fail(fmt.Errorf("rule %d path %d: %w", ri, pi, err))
			}
		}
	}

	p.overlay.recordBuild(ingress, conf, problems)
	return conf
}

// addPathRouter adds the router of one path and its services. On error nothing is added, as upstream does.
func (p *Provider) addPathRouter(conf *dynamic.HTTPConfiguration, ingress *knativenetworkingv1alpha1.Ingress, routerKey string, entrypoints []string, route pathRoute) error {
	wrr, services, err := p.buildWeightedRoundRobin(routerKey, route.splits)
	if err != nil {
		return err
	}

	addRouter(conf, ingress, routerKey, entrypoints, route, &dynamic.Service{Weighted: wrr})
	maps.Copy(conf.Services, services)
	return nil
}

// addUnavailableRouter routes a path to a service without servers, so that it answers 503 rather than falling
// through to another router or 404.
func addUnavailableRouter(conf *dynamic.HTTPConfiguration, ingress *knativenetworkingv1alpha1.Ingress, routerKey string, entrypoints []string, route pathRoute) {
	var lb dynamic.ServersLoadBalancer
	lb.SetDefaults()
	lb.Servers = []dynamic.Server{}
	addRouter(conf, ingress, routerKey, entrypoints, route, &dynamic.Service{LoadBalancer: &lb})
}

func addRouter(conf *dynamic.HTTPConfiguration, ingress *knativenetworkingv1alpha1.Ingress, routerKey string, entrypoints []string, route pathRoute, service *dynamic.Service) {
	router := &dynamic.Router{
		EntryPoints: entrypoints,
		Rule:        buildRule(route.hosts, route.headers, route.path),
		Middlewares: make([]string, 0),
		Service:     routerKey + "-wrr",
	}

	if len(route.appendHeaders) > 0 {
		midKey := routerKey + "-append-headers"
		router.Middlewares = append(router.Middlewares, midKey)
		conf.Middlewares[midKey] = &dynamic.Middleware{
			Headers: &dynamic.Headers{CustomRequestHeaders: route.appendHeaders},
		}
	}

	conf.Routers[routerKey] = router
	if len(ingress.Spec.TLS) > 0 {
		conf.Routers[routerKey+"-tls"] = &dynamic.Router{
			EntryPoints: router.EntryPoints,
			Rule:        router.Rule,
			Middlewares: slices.Clone(router.Middlewares),
			Service:     router.Service,
			TLS:         &dynamic.RouterTLSConfig{},
		}
		// httpOption Redirected: plain HTTP answers with a permanent redirect to the same URL over https (what
		// net-istio's httpsRedirect does); the TLS twin serves.
		if ingress.Spec.HTTPOption == knativenetworkingv1alpha1.HTTPOptionRedirected {
			redirectKey := routerKey + "-redirect-https"
			conf.Middlewares[redirectKey] = &dynamic.Middleware{RedirectScheme: &dynamic.RedirectScheme{Scheme: "https", Permanent: true}}
			router.Middlewares = append([]string{redirectKey}, router.Middlewares...)
		}
	}
	conf.Services[routerKey+"-wrr"] = service
}

// addRewriteRouters routes a path with rewriteHost as if the request had come in with that host: the rule of a
// KIngress of this class whose hosts include it decides the splits, with one router per path of that rule that a
// request matching this path can also match (so header-selected tags of the target keep working), and the backend
// sees Host = rewriteHost. Without such a rule the path answers 503.
func (p *Provider) addRewriteRouters(conf *dynamic.HTTPConfiguration, ingress *knativenetworkingv1alpha1.Ingress, routerKey string, entrypoints []string, route pathRoute, host string) []error {
	target := p.findHostRule(host)
	if target == nil {
		addUnavailableRouter(conf, ingress, routerKey, entrypoints, route)
		return []error{fmt.Errorf("rewriteHost %q: no KIngress of class %s has a rule for this host", host, traefikIngressClassName)}
	}

	var errs []error
	built := 0
	for ti, targetPath := range target.HTTP.Paths {
		if targetPath.RewriteHost != "" {
			errs = append(errs, fmt.Errorf("rewriteHost %q: its path %d rewrites the host again, which is not supported", host, ti))
			continue
		}

		combined, ok := rewriteRoute(route, targetPath, host)
		if !ok {
			continue
		}

		if err := p.addPathRouter(conf, ingress, fmt.Sprintf("%s-rewrite-%d", routerKey, ti), entrypoints, combined); err != nil {
			errs = append(errs, fmt.Errorf("rewriteHost %q: %w", host, err))
			continue
		}
		built++
	}

	if built == 0 {
		addUnavailableRouter(conf, ingress, routerKey, entrypoints, route)
		if len(errs) == 0 {
			errs = append(errs, fmt.Errorf("rewriteHost %q: no path of its rule matches path %q", host, route.path))
		}
	}
	return errs
}

// findHostRule returns the first rule (KIngresses in namespace/name order) of a KIngress of this class whose hosts
// include host.
func (p *Provider) findHostRule(host string) *knativenetworkingv1alpha1.IngressRule {
	ingresses := p.client.ListIngresses()
	slices.SortFunc(ingresses, func(a, b *knativenetworkingv1alpha1.Ingress) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})

	for _, ing := range ingresses {
		if ing.Annotations[knativenetworking.IngressClassAnnotationKey] != traefikIngressClassName {
			continue
		}
		for i, rule := range ing.Spec.Rules {
			if rule.HTTP != nil && slices.Contains(rule.Hosts, host) {
				return &ing.Spec.Rules[i]
			}
		}
	}
	return nil
}

// rewriteRoute combines a rewriteHost path with one path of the target rule: the request must match both (the
// longer path prefix, the union of the header matches), goes to the target path's splits, and carries the headers
// of both paths (the target's win, as they would be applied after ours) with Host = host. The splits of the
// rewriting path only point at the target, so their appendHeaders (Knative's K-Original-Host) apply to the path.
// ok is false when no request can match both.
func rewriteRoute(route pathRoute, target knativenetworkingv1alpha1.HTTPIngressPath, host string) (pathRoute, bool) {
	path, ok := combinePathPrefix(route.path, target.Path)
	if !ok {
		return pathRoute{}, false
	}

	headers, ok := combineHeaderMatches(route.headers, target.Headers)
	if !ok {
		return pathRoute{}, false
	}

	appendHeaders := map[string]string{}
	maps.Copy(appendHeaders, route.appendHeaders)
	for _, split := range route.splits {
		maps.Copy(appendHeaders, split.AppendHeaders)
	}
	maps.Copy(appendHeaders, target.AppendHeaders)
	// Traefik's headers middleware sets the request's Host from a "Host" entry, and the load balancer passes it on.
	appendHeaders["Host"] = host

	return pathRoute{
		hosts:         route.hosts,
		headers:       headers,
		path:          path,
		appendHeaders: appendHeaders,
		splits:        target.Splits,
	}, true
}

// combinePathPrefix is the prefix a path must have to match both prefixes (empty matches everything).
func combinePathPrefix(a, b string) (string, bool) {
	switch {
	case strings.HasPrefix(a, b):
		return a, true
	case strings.HasPrefix(b, a):
		return b, true
	default:
		return "", false
	}
}

// combineHeaderMatches is the union of two sets of exact header matches; ok is false if they contradict.
func combineHeaderMatches(a, b map[string]knativenetworkingv1alpha1.HeaderMatch) (map[string]knativenetworkingv1alpha1.HeaderMatch, bool) {
	if len(a) == 0 && len(b) == 0 {
		return nil, true
	}

	out := make(map[string]knativenetworkingv1alpha1.HeaderMatch, len(a)+len(b))
	maps.Copy(out, a)
	for key, match := range b {
		for existing, m := range out {
			if strings.EqualFold(existing, key) && m.Exact != match.Exact {
				return nil, false
			}
		}
		out[key] = match
	}
	return out, true
}
