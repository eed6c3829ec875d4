// spawn-bench-go: the S1 source's goroutine benchmark, as written.
//
// The source ran a `go test` benchmark with b.ReportAllocs(): every b.N
// iteration starts 100,000 goroutines that each run `defer wg.Done()` and
// exit at once, then waits on the WaitGroup; it reported ns/op and B/op, and
// took a heap profile with -memprofile. This program runs the same function
// through testing.Benchmark (the machinery `go test -bench` uses, b.N chosen
// the same way) and, like -memprofile, writes the process's allocation
// profile after a GC at the end ("allocs": every sampled allocation since
// start, at the runtime's default sampling rate unless --memprofilerate).
//
// Output: one JSON line per count (iteration), the last one carrying the
// gzipped pprof profile in base64 (allocs_profile_gzip_b64). Standard library
// only.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
)

// spawnAndWait is the benchmark body: tasks goroutines that exit at once, joined.
func spawnAndWait(tasks int) {
	var wg sync.WaitGroup
	wg.Add(tasks)
	for j := 0; j < tasks; j++ {
		go func() {
			defer wg.Done()
		}()
	}
	wg.Wait()
}

func main() {
	testing.Init()
	tasks := flag.Int("tasks", 100000, "goroutines started per b.N iteration")
	count := flag.Int("count", 5, "benchmark repetitions in this process (go test -count)")
	benchtime := flag.String("benchtime", "1s", "go test -benchtime")
	memProfileRate := flag.Int("memprofilerate", 0, "runtime.MemProfileRate; 0 keeps the runtime's default, as go test does")
	flag.Parse()
	if *tasks < 1 || *tasks > 1000000 || *count < 1 || *count > 100 {
		fmt.Fprintln(os.Stderr, "spawn-bench-go: --tasks must be 1..1000000 and --count 1..100")
		os.Exit(2)
	}
	if err := flag.Set("test.benchtime", *benchtime); err != nil {
		fmt.Fprintln(os.Stderr, "spawn-bench-go: --benchtime:", err)
		os.Exit(2)
	}
	if *memProfileRate > 0 {
		runtime.MemProfileRate = *memProfileRate
	}
	encoder := json.NewEncoder(os.Stdout)
	for iteration := 0; iteration < *count; iteration++ {
		result := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				spawnAndWait(*tasks)
			}
		})
		line := map[string]any{
			"runtime": "go", "version": runtime.Version(), "model": "goroutine", "bench": "spawn_exit",
			"tasks": *tasks, "iteration": iteration, "warmup": false, "gomaxprocs": runtime.GOMAXPROCS(0),
			"n": result.N, "ns_per_op": result.NsPerOp(), "bytes_per_op": result.AllocedBytesPerOp(),
			"allocs_per_op": result.AllocsPerOp(), "mem_profile_rate": runtime.MemProfileRate,
		}
		if iteration == *count-1 {
			runtime.GC() // as go test does before writing -memprofile
			var profile bytes.Buffer
			if err := pprof.Lookup("allocs").WriteTo(&profile, 0); err != nil {
				fmt.Fprintln(os.Stderr, "spawn-bench-go: allocs profile:", err)
				os.Exit(1)
			}
			line["allocs_profile_gzip_b64"] = base64.StdEncoding.EncodeToString(profile.Bytes())
		}
		if err := encoder.Encode(line); err != nil {
			fmt.Fprintln(os.Stderr, "spawn-bench-go:", err)
			os.Exit(1)
		}
	}
}
