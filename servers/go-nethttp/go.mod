module loadlab/servers/go-nethttp

go 1.24
