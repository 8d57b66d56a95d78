module tidal.dev/cert-manager

go 1.26.0

require github.com/cert-manager/cert-manager v1.21.2
