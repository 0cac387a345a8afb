// Package edge holds the HTTP middleware in front of the gateway's routes:
// request ids, access logs, body limits, API-key auth and per-client rate
// limits. Each writes errors in the gRPC status JSON shape the routes use.
package edge

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
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
// request id and client. Query strings are left out: they can carry tokens.
func AccessLog(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		}
		logger.LogAttrs(r.Context(), level, "http request",
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", status),
			slog.Duration("latency", time.Since(start)),
			slog.Int64("bytes", rec.bytes),
			slog.String("request_id", r.Header.Get(RequestIDHeader)),
			slog.String("client", clientIP(r)),
		)
	})
}

// BodyLimit rejects request bodies over limit bytes with 413. Bodies are read
// here, up to the limit, so the routes never see a partial body and the
// client gets 413 rather than a decode error. A body that does not arrive
// before the server's read timeout gets 408.
func BodyLimit(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > limit {
			tooLarge(w, limit)
			return
		}
		data, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		_ = r.Body.Close()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The server's read timeout passed mid-body: a client too slow
			// (or stalling on purpose) is told so, and the access log shows
			// 408s rather than bad requests.
			WriteError(w, http.StatusRequestTimeout, codes.DeadlineExceeded, "request body not received in time")
			return
		}
		if err != nil {
			WriteError(w, http.StatusBadRequest, codes.InvalidArgument, "could not read the request body")
			return
		}
		if int64(len(data)) > limit {
			tooLarge(w, limit)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		r.ContentLength = int64(len(data))
		next.ServeHTTP(w, r)
	})
}

func tooLarge(w http.ResponseWriter, limit int64) {
	w.Header().Set("Connection", "close")
	WriteError(w, http.StatusRequestEntityTooLarge, codes.ResourceExhausted,
		"request body larger than "+strconv.FormatInt(limit, 10)+" bytes")
}

// Auth requires `Authorization: Bearer <key>` with one of keys on every
// route for which protected returns true. Keys are compared in constant time
// (over their SHA-256, so neither content nor length leaks through timing).
// With no keys, everything is open.
func Auth(keys []string, protected func(*http.Request) bool, next http.Handler) http.Handler {
	if len(keys) == 0 {
		return next
	}
	hashes := make([][32]byte, len(keys))
	for i, k := range keys {
		hashes[i] = sha256.Sum256([]byte(k))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !protected(r) || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		if _, ok := matchKey(hashes, r); !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="groundcrew"`)
			WriteError(w, http.StatusUnauthorized, codes.Unauthenticated, "missing or invalid API key: send Authorization: Bearer <key>")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	return strings.TrimSpace(h[len(prefix):]), true
}

func matchKey(hashes [][32]byte, r *http.Request) (int, bool) {
	key, ok := bearer(r)
	if !ok {
		return -1, false
	}
	sum := sha256.Sum256([]byte(key))
	found := -1
	// Compare against every key so the time taken does not say which matched.
	for i := range hashes {
		if subtle.ConstantTimeCompare(sum[:], hashes[i][:]) == 1 {
			found = i
		}
	}
	return found, found >= 0
}

// RateLimiter is a per-client token bucket. A client is its API key when it
// sends one, otherwise its IP address.
type RateLimiter struct {
	perSecond rate.Limit
	burst     int
	now       func() time.Time

	mu      sync.Mutex
	clients map[string]*clientLimiter
	swept   time.Time
}

type clientLimiter struct {
	limiter  *rate.Limiter
	lastSeen time.Time
}

// NewRateLimiter allows perSecond requests per client with bursts of burst.
func NewRateLimiter(perSecond float64, burst int) *RateLimiter {
	return &RateLimiter{perSecond: rate.Limit(perSecond), burst: burst, now: time.Now, clients: map[string]*clientLimiter{}}
}

// Middleware rejects requests over the limit with 429 and Retry-After.
func (l *RateLimiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wait, ok := l.allow(clientKey(r))
		if !ok {
			secs := int(wait.Seconds() + 0.999)
			if secs < 1 {
				secs = 1
			}
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			WriteError(w, http.StatusTooManyRequests, codes.ResourceExhausted, "rate limit exceeded: retry after "+strconv.Itoa(secs)+"s")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (l *RateLimiter) allow(client string) (time.Duration, bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	// Forget idle clients now and then so the map stays bounded by the
	// clients of the last few minutes.
	if now.Sub(l.swept) > time.Minute {
		for k, c := range l.clients {
			if now.Sub(c.lastSeen) > 5*time.Minute {
				delete(l.clients, k)
			}
		}
		l.swept = now
	}
	c, ok := l.clients[client]
	if !ok {
		c = &clientLimiter{limiter: rate.NewLimiter(l.perSecond, l.burst)}
		l.clients[client] = c
	}
	c.lastSeen = now
	res := c.limiter.ReserveN(now, 1)
	if !res.OK() {
		return time.Second, false
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

func clientKey(r *http.Request) string {
	if key, ok := bearer(r); ok {
		sum := sha256.Sum256([]byte(key))
		return "key:" + hex.EncodeToString(sum[:8])
	}
	return "ip:" + clientIP(r)
}

// clientIP is the peer address. X-Forwarded-For is not trusted: anyone can
// set it, and trusting it would let a client dodge its rate limit.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
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
