// s2-inprocess-go: source S2's experiment as S2 ran it, in one process, no
// HTTP. A generator offers --rate requests a second for --duration-s on a
// fixed schedule (open loop: a request is due at its time whether or not the
// last one finished). Each request does S2's work: --cpu-ms of CPU in an
// accumulating loop that calls runtime.Gosched() as it goes, then a
// --sleep-ms time.Sleep. Two designs:
//
//	spawn: a goroutine per request (S2's "unbounded");
//	pool:  --workers long-lived goroutines reading jobs from a channel of
//	       --queue places (S2's "pool12"); a due request that finds the
//	       channel full waits for a place, and is counted late.
//
// Each request holds --request-bytes of state (allocated when it is due,
// released when it is done), a stand-in for what a real request carries.
//
// Output, JSON lines on stdout: "calibrated" (loop rounds per ms of CPU on
// this core, measured before the generator starts), one "second" line per
// second (due, started, completed, goroutines, RSS, heap, GC), and "done"
// with the totals. The run ends --drain-s after the offered window, whatever
// is still in flight; a request the pool's full channel kept waiting until
// the window's end was never offered ("not_offered"). Under a memory limit the process may be OOM-killed: the
// lines printed until then are the record of how far it got.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// yieldRounds: the accumulating loop yields every this many rounds (the
// servers' /mixed yields as often, servers/go-nethttp/main.go s2YieldRounds).
const yieldRounds = 1024

var sink atomic.Uint64

func accumulate(rounds uint64) uint64 {
	x := uint64(0x9E3779B97F4A7C15)
	for i := uint64(0); i < rounds; i++ {
		x ^= i
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		if i%yieldRounds == yieldRounds-1 {
			runtime.Gosched()
		}
	}
	return x
}

// calibrate returns the loop rounds that take one millisecond of CPU here,
// from the median of several 20 ms samples on an idle process.
func calibrate() uint64 {
	rounds := uint64(1 << 16)
	var perMs []float64
	for len(perMs) < 7 {
		start := time.Now()
		sink.Add(accumulate(rounds))
		elapsed := time.Since(start)
		if elapsed < 20*time.Millisecond {
			rounds *= 2
			continue
		}
		perMs = append(perMs, float64(rounds)/(float64(elapsed)/float64(time.Millisecond)))
	}
	for i := range perMs { // insertion sort: seven numbers
		for j := i; j > 0 && perMs[j] < perMs[j-1]; j-- {
			perMs[j], perMs[j-1] = perMs[j-1], perMs[j]
		}
	}
	return uint64(perMs[len(perMs)/2])
}

func rssBytes() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(fields[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

var samples = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/gc/cycles/total:gc-cycles"},
}

func emit(fields map[string]any) {
	fields["runtime"], fields["version"], fields["bench"] = "go", runtime.Version(), "s2_inprocess"
	fields["model"] = fields["design"]
	line, _ := json.Marshal(fields)
	fmt.Println(string(line))
}

type job struct {
	state []byte
}

func main() {
	design := flag.String("design", "spawn", "spawn (a goroutine per request) or pool (workers fed by a channel)")
	rate := flag.Float64("rate", 2000, "requests offered per second")
	duration := flag.Float64("duration-s", 60, "seconds of offered load")
	workers := flag.Int("workers", 12, "pool: long-lived worker goroutines")
	queue := flag.Int("queue", 1024, "pool: places in the job channel")
	cpuMs := flag.Float64("cpu-ms", 10, "ms of CPU per request (the accumulating loop, yielding)")
	sleepMs := flag.Float64("sleep-ms", 5, "ms of time.Sleep per request, after the CPU work")
	requestBytes := flag.Int("request-bytes", 1024, "bytes of state each request holds until it is done")
	drain := flag.Float64("drain-s", 0, "seconds to wait after the offered load for requests still running")
	flag.Parse()
	if (*design != "spawn" && *design != "pool") || *rate <= 0 || *rate > 1e6 || *duration <= 0 || *duration > 3600 ||
		*workers < 1 || *workers > 100000 || *queue < 0 || *queue > 10_000_000 || *cpuMs < 0 || *cpuMs > 1000 ||
		*sleepMs < 0 || *sleepMs > 10000 || *requestBytes < 0 || *requestBytes > 1<<20 || *drain < 0 || *drain > 600 {
		fmt.Fprintln(os.Stderr, "s2-inprocess-go: --design spawn|pool, --rate 0<r<=1e6, --duration-s 0<d<=3600, "+
			"--workers 1..100000, --queue 0..1e7, --cpu-ms 0..1000, --sleep-ms 0..10000, --request-bytes 0..1MiB, --drain-s 0..600")
		os.Exit(2)
	}
	perMs := calibrate()
	rounds := uint64(*cpuMs * float64(perMs))
	emit(map[string]any{"event": "calibrated", "design": *design, "rounds_per_ms": perMs, "rounds_per_request": rounds,
		"gomaxprocs": runtime.GOMAXPROCS(0), "tasks": 0})

	var started, completed, late atomic.Int64
	work := func(j job) {
		started.Add(1)
		sink.Add(accumulate(rounds) + uint64(len(j.state)))
		time.Sleep(time.Duration(*sleepMs * float64(time.Millisecond)))
		j.state = nil
		completed.Add(1)
	}
	var jobs chan job
	if *design == "pool" {
		jobs = make(chan job, *queue)
		for i := 0; i < *workers; i++ {
			go func() {
				for j := range jobs {
					work(j)
				}
			}()
		}
	}

	interval := time.Duration(float64(time.Second) / *rate)
	total := int64(*duration * *rate)
	begin := time.Now()
	windowEnd := make(chan struct{})
	time.AfterFunc(time.Duration(*duration*float64(time.Second)), func() { close(windowEnd) })
	var due atomic.Int64
	generatorDone := make(chan struct{})
	go func() { // the generator: request k is due at begin + k*interval, until the offered window ends
		defer close(generatorDone)
		for k := int64(0); k < total; k++ {
			at := begin.Add(time.Duration(k) * interval)
			if wait := time.Until(at); wait > 0 {
				time.Sleep(wait)
			}
			select {
			case <-windowEnd:
				return // the window is over: what was not handed over by now was never offered in time
			default:
			}
			j := job{state: make([]byte, *requestBytes)}
			if *design == "spawn" {
				due.Add(1)
				go work(j)
				continue
			}
			select {
			case jobs <- j:
				due.Add(1)
			default:
				late.Add(1) // the channel is full: it waits for a place, or for the window's end
				select {
				case jobs <- j:
					due.Add(1)
				case <-windowEnd:
					return
				}
			}
		}
	}()

	var peakRSS, peakGoroutines, peakLive uint64
	pauseAt := func() float64 { var s debug.GCStats; debug.ReadGCStats(&s); return s.PauseTotal.Seconds() }
	pauseStart := pauseAt()
	end := begin.Add(time.Duration((*duration + *drain) * float64(time.Second)))
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	second := 0
	windowCompleted := int64(-1) // requests completed by the end of the offered window
	for now := range ticker.C {
		second++
		metrics.Read(samples)
		rss, goroutines := rssBytes(), uint64(runtime.NumGoroutine())
		live := samples[0].Value.Uint64()
		if windowCompleted < 0 && now.Sub(begin).Seconds() >= *duration {
			windowCompleted = completed.Load()
		}
		peakRSS, peakGoroutines, peakLive = max(peakRSS, rss), max(peakGoroutines, goroutines), max(peakLive, live)
		emit(map[string]any{"event": "second", "design": *design, "second": second, "t_s": now.Sub(begin).Seconds(),
			"due": due.Load(), "started": started.Load(), "completed": completed.Load(), "late": late.Load(),
			"goroutines": goroutines, "rss_bytes": rss, "heap_live_bytes": live,
			"heap_objects_bytes": samples[1].Value.Uint64(), "gc_cycles": samples[2].Value.Uint64(),
			"gc_pause_total_s": pauseAt() - pauseStart, "tasks": due.Load()})
		finished := false
		select {
		case <-generatorDone:
			finished = completed.Load() == due.Load()
		default:
		}
		if finished || !now.Before(end) {
			elapsed := time.Since(begin).Seconds()
			if windowCompleted < 0 {
				windowCompleted = completed.Load()
			}
			emit(map[string]any{"event": "done", "design": *design, "rate_offered_rps": *rate,
				"duration_s": *duration, "elapsed_s": elapsed, "scheduled": total, "due": due.Load(),
				"not_offered": total - due.Load(), "completed": completed.Load(),
				"completed_in_window": windowCompleted, "throughput_rps": float64(windowCompleted) / *duration,
				"late":           late.Load(),
				"rss_peak_bytes": peakRSS, "goroutines_peak": peakGoroutines, "heap_live_peak_bytes": peakLive,
				"gc_pause_total_s": pauseAt() - pauseStart, "gc_cycles": samples[2].Value.Uint64(),
				"rounds_per_request": rounds, "workers": *workers, "queue": *queue, "tasks": due.Load()})
			return
		}
	}
}
