// go-nethttp serves the loadlab contract (servers/CONTRACT.md) with Go's
// net/http: one goroutine per connection, handlers run on that goroutine.
// Standard library only.
package main

import (
	"encoding/json"
	"expvar"
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
	"time"
)

const (
	serverName = "go-nethttp"
	ioMsMax    = 10000
	cpuNMax    = 10000000
	cpuSeed    = uint64(0xcbf29ce484222325)
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

func write(w http.ResponseWriter, status int, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

func writeJSON(w http.ResponseWriter, status int, value any) {
	body, err := json.Marshal(value)
	if err != nil {
		write(w, http.StatusInternalServerError, "application/json", []byte(`{"error":"internal error"}`))
		return
	}
	write(w, status, "application/json", body)
}

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, struct {
		Error string `json:"error"`
	}{message})
}

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

type cpuResult struct {
	N    uint64 `json:"n"`
	Hash string `json:"hash"`
}

type mixedResult struct {
	N    uint64 `json:"n"`
	Hash string `json:"hash"`
	IoMs uint64 `json:"io_ms"`
}

func plaintext(w http.ResponseWriter, r *http.Request) {
	write(w, http.StatusOK, "text/plain", []byte("Hello, World!"))
}

// plaintext200Body is S1's 200-byte answer: "0123456789" twenty times.
var plaintext200Body = []byte(strings.Repeat("0123456789", 20))

func plaintext200(w http.ResponseWriter, r *http.Request) {
	write(w, http.StatusOK, "text/plain", plaintext200Body)
}

func jsonRoute(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Message string `json:"message"`
	}{"Hello, World!"})
}

func apiUsers(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, users)
}

func ioRoute(w http.ResponseWriter, r *http.Request) {
	ms, problem := intParam(r.URL.RawQuery, "ms", ioMsMax)
	if problem != "" {
		writeError(w, http.StatusBadRequest, problem)
		return
	}
	time.Sleep(time.Duration(ms) * time.Millisecond)
	writeJSON(w, http.StatusOK, struct {
		IoMs uint64 `json:"io_ms"`
	}{ms})
}

func cpuRoute(w http.ResponseWriter, r *http.Request) {
	n, problem := intParam(r.URL.RawQuery, "n", cpuNMax)
	if problem != "" {
		writeError(w, http.StatusBadRequest, problem)
		return
	}
	writeJSON(w, http.StatusOK, cpuResult{n, strconv.FormatUint(cpuHash(n), 10)})
}

func mixedRoute(w http.ResponseWriter, r *http.Request) {
	query := r.URL.RawQuery
	n, problem := intParam(query, "cpu", cpuNMax)
	if problem == "" {
		var ms uint64
		ms, problem = intParam(query, "io", ioMsMax)
		if problem == "" {
			hash := cpuHashYielding(n)
			time.Sleep(time.Duration(ms) * time.Millisecond)
			writeJSON(w, http.StatusOK, mixedResult{n, strconv.FormatUint(hash, 10), ms})
			return
		}
	}
	writeError(w, http.StatusBadRequest, problem)
}

func health(w http.ResponseWriter, r *http.Request) {
	settings := map[string]any{
		"GOMAXPROCS": runtime.GOMAXPROCS(0),
		"GOGC":       os.Getenv("GOGC"),
		"GOMEMLIMIT": os.Getenv("GOMEMLIMIT"),
		"GODEBUG":    os.Getenv("GODEBUG"),
		"HOST":       listenHost(),
		"PORT":       listenPort(),
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"server":          serverName,
		"runtime":         "go",
		"runtime_version": runtime.Version(),
		"model":           "goroutine-per-connection",
		"settings":        settings,
		"contract":        1,
		"num_cpu":         runtime.NumCPU(),
	})
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
			writeError(w, http.StatusNotFound, "not found")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET")
			writeError(w, http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		handler(w, r)
	})
}

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

func main() {
	expvar.Publish("gc", expvar.Func(gcMetrics))
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
	log.Printf("%s %s listening on %s (GOMAXPROCS=%d)", serverName, runtime.Version(), address, runtime.GOMAXPROCS(0))
	log.Fatal(server.ListenAndServe())
}
