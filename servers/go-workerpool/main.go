// go-workerpool serves the loadlab contract (servers/CONTRACT.md) with a
// net/http front and a fixed pool of WORKERS goroutines doing the work.
//
// net/http still reads each connection on its own goroutine, but the
// handler only parses the request: the work of /plaintext, /json,
// /api/users, /io, /cpu and /mixed is a job sent over a bounded channel
// (capacity QUEUE_DEPTH) to the pool. A worker builds the response (status,
// content type, body) and hands it back over the job's own reply channel;
// the handler goroutine writes it. A worker never touches a
// ResponseWriter, so a handler that has returned (client gone) cannot be
// written to after the fact. /io sleeps inside the worker: the pool bounds
// how many requests are in progress at once, which is the point.
//
// A full queue answers 503 at once (QUEUE_FULL=reject) or makes the
// handler wait for room (QUEUE_FULL=block). Standard library only.
package main

import (
	"encoding/json"
	"expvar"
	"fmt"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

const (
	serverName = "go-workerpool"
	model      = "worker-pool"
	ioMsMax    = 10000
	cpuNMax    = 10000000
	cpuSeed    = uint64(0xcbf29ce484222325)

	defaultWorkers    = 12
	defaultQueueDepth = 1024
	maxWorkers        = 100000
	maxQueueDepth     = 1 << 20
)

type user struct {
	ID     int    `json:"id"`
	Name   string `json:"name"`
	Email  string `json:"email"`
	Age    int    `json:"age"`
	Active bool   `json:"active"`
}

var users = []user{
	{1, "Ada Lovelace", "ada.lovelace@example.com", 36, true},
	{2, "Alan Turing", "alan.turing@example.com", 41, true},
	{3, "Grace Hopper", "grace.hopper@example.com", 85, false},
	{4, "Edsger Dijkstra", "edsger.dijkstra@example.com", 72, true},
	{5, "Barbara Liskov", "barbara.liskov@example.com", 86, true},
	{6, "Donald Knuth", "donald.knuth@example.com", 88, false},
	{7, "Margaret Hamilton", "margaret.hamilton@example.com", 90, true},
	{8, "Ken Thompson", "ken.thompson@example.com", 83, true},
	{9, "Frances Allen", "frances.allen@example.com", 88, false},
	{10, "Dennis Ritchie", "dennis.ritchie@example.com", 70, true},
}

// cpuHash is the contract's xorshift loop; Go's uint64 arithmetic already
// wraps modulo 2^64 and >> on unsigned values is logical.
func cpuHash(rounds uint64) uint64 {
	x := cpuSeed
	for i := uint64(0); i < rounds; i++ {
		x ^= i
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// s2YieldRounds: /mixed is S2's work, whose CPU loop called runtime.Gosched()
// as it went; this loop yields every s2YieldRounds rounds (about 2.5 us of
// work here), so the scheduler time-slices requests as in S2 and S2-mcall
// counts the same calls. The hash is the contract's, yields or not.
const s2YieldRounds = 1024

// cpuHashYielding is cpuHash with a runtime.Gosched() every s2YieldRounds rounds.
func cpuHashYielding(rounds uint64) uint64 {
	x := cpuSeed
	for i := uint64(0); i < rounds; i++ {
		x ^= i
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		if i%s2YieldRounds == s2YieldRounds-1 {
			runtime.Gosched()
		}
	}
	return x
}

// ---- responses --------------------------------------------------------------

// response is what a worker hands back: everything the handler needs to
// write, and nothing that refers to the request or its ResponseWriter.
type response struct {
	status      int
	contentType string
	body        []byte
}

func jsonResponse(status int, value any) response {
	body, err := json.Marshal(value)
	if err != nil {
		return response{http.StatusInternalServerError, "application/json", []byte(`{"error":"internal error"}`)}
	}
	return response{status, "application/json", body}
}

func errorResponse(status int, message string) response {
	return jsonResponse(status, struct {
		Error string `json:"error"`
	}{message})
}

func write(w http.ResponseWriter, r response) {
	h := w.Header()
	h.Set("Content-Type", r.contentType)
	h.Set("Content-Length", strconv.Itoa(len(r.body)))
	w.WriteHeader(r.status)
	w.Write(r.body)
}

// ---- the pool ---------------------------------------------------------------

type job struct {
	work  func() response
	reply chan response // capacity 1: a worker's send never waits
}

type poolConfig struct {
	workers    int
	queueDepth int
	reject     bool // QUEUE_FULL=reject; false means block
	queueFull  string
}

var (
	config poolConfig
	queue  chan job

	// Counters, published under expvar "pool".
	enqueued  atomic.Uint64
	rejected  atomic.Uint64
	completed atomic.Uint64
	abandoned atomic.Uint64 // handler returned (client gone) before its reply
	busy      atomic.Int64
)

func worker() {
	for j := range queue {
		busy.Add(1)
		j.reply <- run(j.work)
		busy.Add(-1)
		completed.Add(1)
	}
}

// run does one job; a panic becomes a 500 instead of killing the process.
func run(work func() response) (result response) {
	defer func() {
		if recovered := recover(); recovered != nil {
			log.Printf("job panicked: %v", recovered)
			result = errorResponse(http.StatusInternalServerError, "internal error")
		}
	}()
	return work()
}

var queueFullBody = []byte(`{"error":"queue full"}`)

// submit hands work to the pool and writes its response. It is the only
// place a pooled route's ResponseWriter is written.
func submit(w http.ResponseWriter, r *http.Request, work func() response) {
	j := job{work: work, reply: make(chan response, 1)}
	if config.reject {
		select {
		case queue <- j:
		default:
			rejected.Add(1)
			w.Header().Set("Retry-After", "1")
			write(w, response{http.StatusServiceUnavailable, "application/json", queueFullBody})
			return
		}
	} else {
		select {
		case queue <- j:
		case <-r.Context().Done(): // client gone while waiting for room
			abandoned.Add(1)
			return
		}
	}
	enqueued.Add(1)
	select {
	case result := <-j.reply:
		write(w, result)
	case <-r.Context().Done():
		// The worker will still finish the job and drop its reply into the
		// buffered channel; nobody writes to w after this return.
		abandoned.Add(1)
	}
}

// ---- parameters -------------------------------------------------------------

// firstValue returns the first value of `name` in a raw query. Unlike
// url.ParseQuery, which drops pairs with a malformed escape or a ';', the
// contract keeps such a value literally (CONTRACT.md, "Parameters").
func firstValue(rawQuery, name string) (string, bool) {
	for _, pair := range strings.Split(rawQuery, "&") {
		key, value, _ := strings.Cut(pair, "=")
		if decoded, err := url.QueryUnescape(key); err == nil {
			key = decoded
		}
		if key != name {
			continue
		}
		if decoded, err := url.QueryUnescape(value); err == nil {
			value = decoded
		}
		return value, true
	}
	return "", false
}

// intParam parses a contract parameter; it returns the value or the error
// message the contract prescribes.
func intParam(rawQuery string, name string, max uint64) (uint64, string) {
	raw, found := firstValue(rawQuery, name)
	if !found || raw == "" {
		return 0, "parameter " + name + " is required"
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] < '0' || raw[i] > '9' {
			return 0, "parameter " + name + " must be a non-negative integer"
		}
	}
	tooBig := "parameter " + name + " must be at most " + strconv.FormatUint(max, 10)
	// All digits: only the magnitude can be wrong, and it must not overflow.
	if len(strings.TrimLeft(raw, "0")) > 19 {
		return 0, tooBig
	}
	value, err := strconv.ParseUint(raw, 10, 64)
	if err != nil || value > max {
		return 0, tooBig
	}
	return value, ""
}

// ---- routes -----------------------------------------------------------------
//
// Each pooled route validates its parameters on the handler goroutine (a
// 400 costs the pool nothing) and submits a closure doing the work.

type cpuResult struct {
	N    uint64 `json:"n"`
	Hash string `json:"hash"`
}

type mixedResult struct {
	N    uint64 `json:"n"`
	Hash string `json:"hash"`
	IoMs uint64 `json:"io_ms"`
}

var plaintextBody = []byte("Hello, World!")

// plaintext200Body is S1's 200-byte answer: "0123456789" twenty times.
var plaintext200Body = []byte(strings.Repeat("0123456789", 20))

func plaintext200(w http.ResponseWriter, r *http.Request) {
	submit(w, r, func() response {
		return response{http.StatusOK, "text/plain", plaintext200Body}
	})
}

func plaintext(w http.ResponseWriter, r *http.Request) {
	submit(w, r, func() response {
		return response{http.StatusOK, "text/plain", plaintextBody}
	})
}

func jsonRoute(w http.ResponseWriter, r *http.Request) {
	submit(w, r, func() response {
		return jsonResponse(http.StatusOK, struct {
			Message string `json:"message"`
		}{"Hello, World!"})
	})
}

func apiUsers(w http.ResponseWriter, r *http.Request) {
	submit(w, r, func() response {
		return jsonResponse(http.StatusOK, users)
	})
}

func ioRoute(w http.ResponseWriter, r *http.Request) {
	ms, problem := intParam(r.URL.RawQuery, "ms", ioMsMax)
	if problem != "" {
		write(w, errorResponse(http.StatusBadRequest, problem))
		return
	}
	submit(w, r, func() response {
		time.Sleep(time.Duration(ms) * time.Millisecond) // blocks this worker
		return jsonResponse(http.StatusOK, struct {
			IoMs uint64 `json:"io_ms"`
		}{ms})
	})
}

func cpuRoute(w http.ResponseWriter, r *http.Request) {
	n, problem := intParam(r.URL.RawQuery, "n", cpuNMax)
	if problem != "" {
		write(w, errorResponse(http.StatusBadRequest, problem))
		return
	}
	submit(w, r, func() response {
		return jsonResponse(http.StatusOK, cpuResult{n, strconv.FormatUint(cpuHash(n), 10)})
	})
}

func mixedRoute(w http.ResponseWriter, r *http.Request) {
	query := r.URL.RawQuery
	n, problem := intParam(query, "cpu", cpuNMax)
	var ms uint64
	if problem == "" {
		ms, problem = intParam(query, "io", ioMsMax)
	}
	if problem != "" {
		write(w, errorResponse(http.StatusBadRequest, problem))
		return
	}
	submit(w, r, func() response {
		hash := cpuHashYielding(n)
		time.Sleep(time.Duration(ms) * time.Millisecond)
		return jsonResponse(http.StatusOK, mixedResult{n, strconv.FormatUint(hash, 10), ms})
	})
}

// health answers on the handler goroutine, not through the pool, so the
// harness can read it while the pool is saturated.
func health(w http.ResponseWriter, r *http.Request) {
	settings := map[string]any{
		"WORKERS":     config.workers,
		"QUEUE_DEPTH": config.queueDepth,
		"QUEUE_FULL":  config.queueFull,
		"GOMAXPROCS":  runtime.GOMAXPROCS(0),
		"GOGC":        os.Getenv("GOGC"),
		"GOMEMLIMIT":  os.Getenv("GOMEMLIMIT"),
		"GODEBUG":     os.Getenv("GODEBUG"),
		"HOST":        listenHost(),
		"PORT":        listenPort(),
	}
	write(w, jsonResponse(http.StatusOK, map[string]any{
		"server":          serverName,
		"runtime":         "go",
		"runtime_version": runtime.Version(),
		"model":           model,
		"settings":        settings,
		"contract":        1,
		"num_cpu":         runtime.NumCPU(),
		"queue_length":    len(queue),
		"queue_capacity":  cap(queue),
		"busy_workers":    busy.Load(),
	}))
}

func poolStats() any {
	return map[string]any{
		"workers":      config.workers,
		"queue_depth":  config.queueDepth,
		"queue_full":   config.queueFull,
		"queue_length": len(queue),
		"busy_workers": busy.Load(),
		"enqueued":     enqueued.Load(),
		"rejected":     rejected.Load(),
		"completed":    completed.Load(),
		"abandoned":    abandoned.Load(),
	}
}

// gcMetrics publishes runtime/metrics GC and scheduler samples for expvar.
// JSON has no infinities, so infinite histogram bounds become "-Inf"/"+Inf".
func gcMetrics() any {
	var samples []metrics.Sample
	for _, description := range metrics.All() {
		name := description.Name
		if strings.HasPrefix(name, "/gc/") || strings.HasPrefix(name, "/sched/") ||
			strings.HasPrefix(name, "/memory/classes/heap/") || name == "/memory/classes/total:bytes" {
			samples = append(samples, metrics.Sample{Name: name})
		}
	}
	metrics.Read(samples)
	out := make(map[string]any, len(samples))
	for _, sample := range samples {
		switch sample.Value.Kind() {
		case metrics.KindUint64:
			out[sample.Name] = sample.Value.Uint64()
		case metrics.KindFloat64:
			out[sample.Name] = finite(sample.Value.Float64())
		case metrics.KindFloat64Histogram:
			histogram := sample.Value.Float64Histogram()
			buckets := make([]any, len(histogram.Buckets))
			for i, bound := range histogram.Buckets {
				buckets[i] = finite(bound)
			}
			out[sample.Name] = map[string]any{"buckets": buckets, "counts": histogram.Counts}
		}
	}
	return out
}

func finite(value float64) any {
	switch {
	case math.IsInf(value, 1):
		return "+Inf"
	case math.IsInf(value, -1):
		return "-Inf"
	case math.IsNaN(value):
		return "NaN"
	}
	return value
}

var routes = map[string]http.HandlerFunc{
	"/plaintext":    plaintext,
	"/plaintext200": plaintext200,
	"/json":         jsonRoute,
	"/api/users":    apiUsers,
	"/io":           ioRoute,
	"/cpu":          cpuRoute,
	"/mixed":        mixedRoute,
	"/health":       health,
}

// contractHandler dispatches by exact path so that unknown paths and wrong
// methods get the contract's JSON answers rather than net/http's text ones.
func contractHandler(debug http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", serverName)
		if strings.HasPrefix(r.URL.Path, "/debug/") {
			debug.ServeHTTP(w, r)
			return
		}
		handler, known := routes[r.URL.Path]
		if !known {
			write(w, errorResponse(http.StatusNotFound, "not found"))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET")
			write(w, errorResponse(http.StatusMethodNotAllowed, "method not allowed"))
			return
		}
		handler(w, r)
	})
}

// ---- configuration ----------------------------------------------------------

func listenHost() string {
	if host := os.Getenv("HOST"); host != "" {
		return host
	}
	return "0.0.0.0"
}

func listenPort() string {
	if port := os.Getenv("PORT"); port != "" {
		return port
	}
	return "8080"
}

func intSetting(name string, fallback, low, high int) (int, error) {
	raw := os.Getenv(name)
	if raw == "" {
		return fallback, nil
	}
	value, err := strconv.Atoi(raw)
	if err != nil || value < low || value > high || strings.TrimLeft(raw, "0123456789") != "" {
		return 0, fmt.Errorf("%s must be an integer from %d to %d, not %q", name, low, high, raw)
	}
	return value, nil
}

func loadConfig() (poolConfig, error) {
	workers, err := intSetting("WORKERS", defaultWorkers, 1, maxWorkers)
	if err != nil {
		return poolConfig{}, err
	}
	depth, err := intSetting("QUEUE_DEPTH", defaultQueueDepth, 0, maxQueueDepth)
	if err != nil {
		return poolConfig{}, err
	}
	full := os.Getenv("QUEUE_FULL")
	if full == "" {
		full = "reject"
	}
	if full != "reject" && full != "block" {
		return poolConfig{}, fmt.Errorf("QUEUE_FULL must be reject or block, not %q", full)
	}
	return poolConfig{workers: workers, queueDepth: depth, reject: full == "reject", queueFull: full}, nil
}

func main() {
	var err error
	if config, err = loadConfig(); err != nil {
		log.Fatal(err)
	}
	queue = make(chan job, config.queueDepth)
	for i := 0; i < config.workers; i++ {
		go worker()
	}

	expvar.Publish("gc", expvar.Func(gcMetrics))
	expvar.Publish("pool", expvar.Func(poolStats))
	debug := http.NewServeMux()
	debug.HandleFunc("/debug/pprof/", pprof.Index)
	debug.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	debug.HandleFunc("/debug/pprof/profile", pprof.Profile)
	debug.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	debug.HandleFunc("/debug/pprof/trace", pprof.Trace)
	debug.Handle("/debug/vars", expvar.Handler())

	address := net.JoinHostPort(listenHost(), listenPort())
	server := &http.Server{
		Addr:              address,
		Handler:           contractHandler(debug),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	log.Printf("%s %s listening on %s (GOMAXPROCS=%d WORKERS=%d QUEUE_DEPTH=%d QUEUE_FULL=%s)",
		serverName, runtime.Version(), address, runtime.GOMAXPROCS(0), config.workers, config.queueDepth, config.queueFull)
	log.Fatal(server.ListenAndServe())
}
