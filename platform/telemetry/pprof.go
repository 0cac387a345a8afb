package telemetry

import (
	"net/http"
	"net/http/pprof"
)

// HandleProfiler serves Go's profiler under /debug/pprof/ on mux, for
// operators chasing CPU or memory (go tool pprof against
// /debug/pprof/profile). Mount it on an admin port (loopback by default),
// never on the public API.
func HandleProfiler(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}
