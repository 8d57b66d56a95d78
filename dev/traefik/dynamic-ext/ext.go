// Package ext fills the extension hooks that Traefik's dynamic configuration embeds (dynamic.HTTPConfiguration embeds
// ext.HTTP, dynamic.Router embeds ext.Router). Traefik keeps them in a nested module of its repository
// (pkg/config/dynamic/ext, reached through a `replace` in its go.mod) that module zips leave out, so
// dev/build-traefik.sh copies this module to that path. Open-source Traefik extends nothing: both are empty.
package ext

// HTTP extends dynamic.HTTPConfiguration; empty, so it adds no fields to the configuration.
type HTTP struct{}

// Router extends dynamic.Router; empty, so it adds no fields to a router.
type Router struct{}
