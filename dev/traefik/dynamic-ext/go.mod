module github.com/traefik/traefik/dynamic/ext

go 1.22
