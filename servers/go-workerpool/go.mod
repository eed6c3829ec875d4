module loadlab/servers/go-workerpool

go 1.24
