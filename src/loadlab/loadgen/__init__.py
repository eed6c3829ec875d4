"""Load generators: command lines, running them in the loadgen image, parsing what they write.

`wrk` is the closed loop (a fixed number of connections), `vegeta` the open
loop (a constant request rate). Both run in the `loadlab/loadgen` image with
host networking on CPUs disjoint from the server's.
"""
