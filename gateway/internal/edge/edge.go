// Package edge holds the HTTP middleware in front of the gateway's routes:
// request ids, access logs, body limits, named API keys with scopes, the
// client's identity (trusted proxies), per-client rate and stream limits,
// Host and Content-Type checks against browser attacks, and the scrubbing of
// client headers before a backend sees the request. Each writes errors in
// the gRPC status JSON shape the routes use.
package edge

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
)

// RequestIDHeader carries the request id in and out, and on to the backends.
const RequestIDHeader = "X-Request-Id"

// WriteError writes a gRPC-status-shaped JSON error, like the routes do.
func WriteError(w http.ResponseWriter, httpStatus int, code codes.Code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	_ = json.NewEncoder(w).Encode(struct {
		Code    int32  `json:"code"`
		Message string `json:"message"`
		Details []any  `json:"details"`
	}{int32(code), msg, []any{}})
}

// RequestID makes sure every request has an id: the client's X-Request-Id
// when it is sane, otherwise a new one. The id is echoed in the response and
// forwarded to the backends.
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = newID()
			r.Header.Set(RequestIDHeader, id)
		}
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r)
	})
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// statusRecorder remembers the status and size of a response. It passes
// Flush through, which streaming routes need.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(p)
	s.bytes += int64(n)
	return n, err
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// AccessLog logs one line per request: method, path, status, latency, size,
// request id and client, at info (error for a 5xx; debug for the probes,
// GET /healthz and /readyz). Query strings are left out: they can carry
// tokens.
func AccessLog(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		slot := &clientSlot{}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), clientSlotKey{}, slot)))
		// The client Identify settled on (through trusted proxies), or the
		// peer for routes it does not run on.
		client := peerIP(r)
		if slot.c != nil {
			client = slot.c.IP
		}
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		level := slog.LevelInfo
		switch {
		case probe(r):
			// Probes come every few seconds, and /readyz answers 503 while
			// backends start: expected, and the readiness check logs its
			// own changes. Debug only.
			level = slog.LevelDebug
		case status >= 500:
			level = slog.LevelError
		}
		logger.LogAttrs(r.Context(), level, "http request",
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", status),
			slog.Duration("latency", time.Since(start)),
			slog.Int64("bytes", rec.bytes),
			slog.String("request_id", r.Header.Get(RequestIDHeader)),
			slog.String("client", client),
		)
	})
}

// probe reports whether r is a health or readiness probe.
func probe(r *http.Request) bool {
	return r.Method == http.MethodGet && (r.URL.Path == "/healthz" || r.URL.Path == "/readyz")
}

// BodyLimit rejects request bodies over limit(r) bytes with 413: at once,
// unread, when the body declares a larger length, else as soon as the
// limit is passed. Bodies are read here, up to the limit, so the routes
// never see a partial body and the client gets 413 rather than a decode
// error. A body that does not arrive before the server's read timeout gets
// 408.
func BodyLimit(limit func(*http.Request) int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		max := limit(r)
		if r.ContentLength > max {
			tooLarge(w, r, max)
			return
		}
		// The body is not closed here: closing an unread body makes
		// net/http drain it, waiting for a sender that holds it open.
		data, err := readBody(r, max)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The server's read timeout passed mid-body: a client too slow
			// (or stalling on purpose) is told so, and the access log shows
			// 408s rather than bad requests.
			WriteError(w, http.StatusRequestTimeout, codes.DeadlineExceeded, "request body not received in time")
			return
		}
		if errors.Is(err, errTooLarge) {
			tooLarge(w, r, max)
			return
		}
		if err != nil {
			WriteError(w, http.StatusBadRequest, codes.InvalidArgument, "could not read the request body")
			return
		}
		r.Body = &Body{Reader: bytes.NewReader(data), data: data}
		r.ContentLength = int64(len(data))
		next.ServeHTTP(w, r)
	})
}

// Body is a request body [BodyLimit] has read whole. It reads as usual,
// and Bytes returns all of it however much has been read: the codec
// decodes from it without another copy, and the error handler can replay
// a decode that failed to say which field it failed at.
type Body struct {
	*bytes.Reader
	data []byte
}

// Close does nothing: the body is in memory.
func (b *Body) Close() error { return nil }

// Bytes returns the whole body.
func (b *Body) Bytes() []byte { return b.data }

// readBody reads r's body, at most max+1 bytes of it. A declared length
// is read into one buffer of that size, so what is held is what
// [Admission] reserved. A chunked body is read into pooled blocks and
// copied once it is known to fit, so a body refused for its size leaves
// no garbage behind (a flood of them would otherwise grow the heap with
// buffers doubled on the way to the limit).
func readBody(r *http.Request, max int64) ([]byte, error) {
	if r.ContentLength > 0 {
		data := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, data); err != nil {
			return nil, err
		}
		return data, nil
	}
	var blocks []*[]byte
	defer func() {
		for _, b := range blocks {
			blockPool.Put(b)
		}
	}()
	var total int64
	used := blockSize // bytes filled in the last block
	for total <= max {
		if used == blockSize {
			blocks = append(blocks, blockPool.Get().(*[]byte))
			used = 0
		}
		n, err := r.Body.Read((*blocks[len(blocks)-1])[used:])
		used += n
		total += int64(n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if total > max {
		return nil, errTooLarge
	}
	data := make([]byte, 0, total)
	for _, b := range blocks {
		data = append(data, (*b)[:min(int64(blockSize), total-int64(len(data)))]...)
	}
	return data, nil
}

// errTooLarge says a body went past its limit.
var errTooLarge = errors.New("request body too large")

// blockSize is the size of the blocks chunked bodies are read into.
const blockSize = 32 << 10

var blockPool = sync.Pool{New: func() any {
	b := make([]byte, blockSize)
	return &b
}}

func tooLarge(w http.ResponseWriter, r *http.Request, limit int64) {
	refuseUnread(w, r)
	WriteError(w, http.StatusRequestEntityTooLarge, codes.ResourceExhausted,
		"request body larger than "+strconv.FormatInt(limit, 10)+" bytes")
}

// Recover turns a panic in a handler into a 500 with no detail, logged with
// the request id.
func Recover(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(v)
				}
				logger.ErrorContext(r.Context(), "panic in http handler", "panic", v, "request_id", r.Header.Get(RequestIDHeader), "path", r.URL.Path)
				WriteError(w, http.StatusInternalServerError, codes.Internal, "internal error")
			}
		}()
		next.ServeHTTP(w, r)
	})
}
