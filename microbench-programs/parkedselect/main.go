// parked-select-go: S2-gopark's setup. Start N goroutines that block forever
// in an empty select, then hold. A goroutine blocked in select{} parks once
// (runtime.gopark) and is never woken, so a uprobe on runtime.gopark counted
// from outside (loadlab.harness.uprobes) sees about N calls when they start
// and then what the runtime's own goroutines do.
//
// Timeline, printed as JSON lines on stdout with Unix times, so the counts a
// probe takes per second can be lined up: "started" (process up, nothing
// spawned), then after --delay-s "spawned" (all N parked), then --hold-s of
// nothing, then "done".
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"
)

func emit(event string, goroutines int) {
	line, _ := json.Marshal(map[string]any{
		"runtime": "go", "version": runtime.Version(), "model": "goroutine", "bench": "parked_select", "event": event,
		"tasks":      goroutines,
		"goroutines": goroutines, "num_goroutine": runtime.NumGoroutine(),
		"t_unix_s": float64(time.Now().UnixNano()) / 1e9,
	})
	fmt.Println(string(line))
}

func main() {
	goroutines := flag.Int("goroutines", 127, "goroutines blocked in select{}")
	delay := flag.Float64("delay-s", 2, "seconds before spawning (for the probes to attach)")
	hold := flag.Float64("hold-s", 5, "seconds to hold the parked goroutines")
	flag.Parse()
	if *goroutines < 0 || *goroutines > 1_000_000 || *delay < 0 || *hold <= 0 {
		fmt.Fprintln(os.Stderr, "parked-select-go: --goroutines 0..1000000, --delay-s >= 0, --hold-s > 0")
		os.Exit(2)
	}
	emit("started", *goroutines)
	time.Sleep(time.Duration(*delay * float64(time.Second)))
	for i := 0; i < *goroutines; i++ {
		go func() { select {} }()
	}
	runtime.Gosched()
	emit("spawned", *goroutines)
	time.Sleep(time.Duration(*hold * float64(time.Second)))
	emit("done", *goroutines)
}
