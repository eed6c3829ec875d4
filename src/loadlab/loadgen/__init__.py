"""The load generators' command lines and output formats.

`wrk` is the closed loop (a fixed number of connections), `vegeta` the open
loop (a constant request rate). Building their commands and parsing what they
write needs no engine; running them in the loadgen image is
`loadlab.harness.loadgen`.
"""
