// spawn-go: what starting, parking and joining N goroutines costs.
//
// One process measures one N (the Python side starts a fresh process per
// repetition, so no run inherits another's free lists). Each goroutine
// signals that it runs, then blocks on a channel until all are released: a
// "sleeping task". Measured while all N are parked:
//
//	spawn_s                 first `go` statement -> the last goroutine signalled
//	join_s                  release -> every goroutine finished (WaitGroup)
//	rss_delta_bytes         /proc/self/status VmRSS, parked minus before
//	vm_size_delta_bytes     /proc/self/status VmSize (address space reserved)
//	stack_inuse_delta_bytes runtime.MemStats.StackInuse (goroutine stacks)
//	heap_delta_bytes        runtime.MemStats.HeapAlloc (g structs, closures, ...)
//	total_alloc_delta_bytes runtime.MemStats.TotalAlloc (heap bytes allocated)
//	sys_delta_bytes         runtime.MemStats.Sys (everything the runtime mapped)
//	threads                 /proc/self/status Threads: while parked
//	*_ctxt_switches_delta   getrusage(RUSAGE_SELF): every thread of the process,
//	                        including threads that exited; before -> parked
//	live_threads_*          the sum over /proc/self/task/*/status (live threads only)
//	self_status_*           /proc/self/status alone: the thread-group leader only
//
// --iterations > 1 repeats the measurement in the same process; iteration 0
// is the fresh-process one (later ones reuse the runtime's free g structs
// and stacks). Standard library only. Output: one JSON line per iteration.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type procStatus struct {
	rssBytes, vmSizeBytes, threads, voluntary, nonvoluntary int64
}

// readStatus parses the fields we use from a /proc/<...>/status file.
func readStatus(path string) (procStatus, error) {
	var s procStatus
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		key, value, ok := strings.Cut(scanner.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		switch key {
		case "VmRSS":
			s.rssBytes = n * 1024
		case "VmSize":
			s.vmSizeBytes = n * 1024
		case "Threads":
			s.threads = n
		case "voluntary_ctxt_switches":
			s.voluntary = n
		case "nonvoluntary_ctxt_switches":
			s.nonvoluntary = n
		}
	}
	return s, scanner.Err()
}

// liveThreadSwitches sums the per-thread counters of the threads alive now.
func liveThreadSwitches() (voluntary, nonvoluntary int64) {
	paths, _ := filepath.Glob("/proc/self/task/*/status")
	for _, p := range paths {
		s, err := readStatus(p)
		if err != nil { // the thread exited while we looked
			continue
		}
		voluntary += s.voluntary
		nonvoluntary += s.nonvoluntary
	}
	return
}

func cpuSeconds(ru *syscall.Rusage) float64 {
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// processCPUSeconds is user + system time of every thread of the process so far.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "spawn-go: getrusage:", err)
		os.Exit(2)
	}
	return cpuSeconds(&ru)
}

type snapshot struct {
	status                  procStatus
	liveVol, liveNonvol     int64
	rusageVol, rusageNonvol int64
	cpuS                    float64
	minorFaults             int64
	mem                     runtime.MemStats
}

// readCounters reads getrusage: the context switches, CPU time and faults of every
// thread of the process, the figures the headline fields come from.
func (s *snapshot) readCounters() {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "spawn-go: getrusage:", err)
		os.Exit(2)
	}
	s.rusageVol, s.rusageNonvol = int64(ru.Nvcsw), int64(ru.Nivcsw)
	s.cpuS = cpuSeconds(&ru)
	s.minorFaults = int64(ru.Minflt)
}

// readRest reads /proc/self/status, every live thread's status and MemStats.
func (s *snapshot) readRest() {
	var err error
	if s.status, err = readStatus("/proc/self/status"); err != nil {
		fmt.Fprintln(os.Stderr, "spawn-go: /proc/self/status:", err)
		os.Exit(2)
	}
	s.liveVol, s.liveNonvol = liveThreadSwitches()
	runtime.ReadMemStats(&s.mem) // stops the world: after the kernel's figures
}

// take is for the start of an interval: getrusage last, right before it begins.
func take() snapshot {
	var s snapshot
	s.readRest()
	s.readCounters()
	return s
}

// takeAfter is for the end of an interval: getrusage first, right after it ends.
func takeAfter() snapshot {
	var s snapshot
	s.readCounters()
	s.readRest()
	return s
}

// result is one JSON line; the field order is the output's.
type result struct {
	Runtime                      string  `json:"runtime"`
	Version                      string  `json:"version"`
	Model                        string  `json:"model"`
	Bench                        string  `json:"bench"`
	Tasks                        int     `json:"tasks"`
	Iteration                    int     `json:"iteration"`
	Warmup                       bool    `json:"warmup"`
	Gomaxprocs                   int     `json:"gomaxprocs"`
	SpawnS                       float64 `json:"spawn_s"`
	JoinS                        float64 `json:"join_s"`
	SpawnCPUS                    float64 `json:"spawn_cpu_s"`
	JoinCPUS                     float64 `json:"join_cpu_s"`
	MinorFaultsDelta             int64   `json:"minor_faults_delta"`
	RSSDeltaBytes                int64   `json:"rss_delta_bytes"`
	VMSizeDeltaBytes             int64   `json:"vm_size_delta_bytes"`
	StackInuseDeltaBytes         int64   `json:"stack_inuse_delta_bytes"`
	HeapDeltaBytes               int64   `json:"heap_delta_bytes"`
	TotalAllocDeltaBytes         int64   `json:"total_alloc_delta_bytes"`
	SysDeltaBytes                int64   `json:"sys_delta_bytes"`
	GCCyclesDelta                int64   `json:"gc_cycles_delta"`
	ThreadsBefore                int64   `json:"threads_before"`
	Threads                      int64   `json:"threads"`
	VoluntaryDelta               int64   `json:"voluntary_ctxt_switches_delta"`
	NonvoluntaryDelta            int64   `json:"nonvoluntary_ctxt_switches_delta"`
	LiveThreadsVoluntaryDelta    int64   `json:"live_threads_voluntary_ctxt_switches_delta"`
	LiveThreadsNonvoluntaryDelta int64   `json:"live_threads_nonvoluntary_ctxt_switches_delta"`
	SelfStatusVoluntaryDelta     int64   `json:"self_status_voluntary_ctxt_switches_delta"`
	SelfStatusNonvoluntaryDelta  int64   `json:"self_status_nonvoluntary_ctxt_switches_delta"`
	CtxtSwitchesSource           string  `json:"ctxt_switches_source"`
}

func measure(n, iteration int) result {
	runtime.GC()
	before := take()

	var started, finished sync.WaitGroup
	release := make(chan struct{})
	started.Add(n)
	finished.Add(n)
	t0 := time.Now()
	for i := 0; i < n; i++ {
		go func() {
			started.Done()
			<-release
			finished.Done()
		}()
	}
	started.Wait()
	spawn := time.Since(t0)

	parked := takeAfter()

	t1 := time.Now()
	cpu1 := processCPUSeconds()
	close(release)
	finished.Wait()
	join := time.Since(t1)
	joinCPU := processCPUSeconds() - cpu1

	return result{
		Runtime:                      "go",
		Version:                      runtime.Version(),
		Model:                        "goroutine",
		Bench:                        "sleepers",
		Tasks:                        n,
		Iteration:                    iteration,
		Warmup:                       false,
		Gomaxprocs:                   runtime.GOMAXPROCS(0),
		SpawnS:                       spawn.Seconds(),
		JoinS:                        join.Seconds(),
		SpawnCPUS:                    parked.cpuS - before.cpuS,
		JoinCPUS:                     joinCPU,
		MinorFaultsDelta:             parked.minorFaults - before.minorFaults,
		RSSDeltaBytes:                parked.status.rssBytes - before.status.rssBytes,
		VMSizeDeltaBytes:             parked.status.vmSizeBytes - before.status.vmSizeBytes,
		StackInuseDeltaBytes:         int64(parked.mem.StackInuse) - int64(before.mem.StackInuse),
		HeapDeltaBytes:               int64(parked.mem.HeapAlloc) - int64(before.mem.HeapAlloc),
		TotalAllocDeltaBytes:         int64(parked.mem.TotalAlloc) - int64(before.mem.TotalAlloc),
		SysDeltaBytes:                int64(parked.mem.Sys) - int64(before.mem.Sys),
		GCCyclesDelta:                int64(parked.mem.NumGC) - int64(before.mem.NumGC),
		ThreadsBefore:                before.status.threads,
		Threads:                      parked.status.threads,
		VoluntaryDelta:               parked.rusageVol - before.rusageVol,
		NonvoluntaryDelta:            parked.rusageNonvol - before.rusageNonvol,
		LiveThreadsVoluntaryDelta:    parked.liveVol - before.liveVol,
		LiveThreadsNonvoluntaryDelta: parked.liveNonvol - before.liveNonvol,
		SelfStatusVoluntaryDelta:     parked.status.voluntary - before.status.voluntary,
		SelfStatusNonvoluntaryDelta:  parked.status.nonvoluntary - before.status.nonvoluntary,
		CtxtSwitchesSource:           "getrusage(RUSAGE_SELF)",
	}
}

func main() {
	tasks := flag.Int("tasks", 0, "goroutines to start (required, 1 to 10,000,000)")
	iterations := flag.Int("iterations", 1, "measurements in this process (iteration 0 is the fresh-process one)")
	flag.Parse()
	if *tasks < 1 || *tasks > 10_000_000 || *iterations < 1 || *iterations > 100 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: spawn-go --tasks N [--iterations I]  (1 <= N <= 10000000, 1 <= I <= 100)")
		os.Exit(2)
	}
	out := json.NewEncoder(os.Stdout)
	for i := 0; i < *iterations; i++ {
		if err := out.Encode(measure(*tasks, i)); err != nil {
			fmt.Fprintln(os.Stderr, "spawn-go:", err)
			os.Exit(1)
		}
	}
}
