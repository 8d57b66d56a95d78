module tidal.dev/pause

go 1.26
