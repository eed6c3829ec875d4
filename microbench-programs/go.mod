module loadlab/microbench

go 1.24
