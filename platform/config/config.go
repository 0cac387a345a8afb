// Package config loads a service's typed configuration from environment
// variables and prints it safely.
//
// A service declares one struct whose fields carry `env:"NAME"` and
// `envDefault:"…"` tags (github.com/caarlos0/env/v11 syntax), usually
// embedding [Common]. main calls [Load] with os.LookupEnv; tests pass a map's
// lookup instead, so they never touch the process environment. Fields tagged
// `secret:"true"` are never printed: [Attrs] reports them as "set (masked)"
// or "unset", which lets every service log what it changed from the
// defaults in one start-up line ([LogValue]) and its whole configuration at
// debug level ([FullLogValue]).
//
// Only value fields are supported for nesting (struct fields, embedded or not,
// with an optional `envPrefix` tag); pointer-to-struct fields are ignored by
// the masking walk.
package config

import (
	"context"
	"encoding"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/groundcrew/groundcrew/platform/logging"
)

// Masked and Unset are what [Attrs] prints in place of a secret's value.
const (
	Masked = "set (masked)"
	Unset  = "unset"
)

// Validator is implemented by configuration structs that check their values
// after parsing. [Load] calls Validate on a pointer to the parsed struct.
// A struct that embeds [Common] gets Common's Validate promoted; if it
// declares its own, that method should call Common.Validate too.
type Validator interface {
	Validate() error
}

// Load parses the variables named by T's `env` tags, looked up through
// lookup (os.LookupEnv when nil), into a new T, then runs T's Validate
// method if it has one. Variables that are not set take their `envDefault`.
//
// Errors name the variable and say what was expected, e.g.
// `GROUNDING_MAX_SOURCES: must be an integer, got "x"`; several problems are
// reported together, one per line. Load never panics on bad input.
func Load[T any](lookup func(string) (string, bool)) (T, error) {
	var cfg T
	if lookup == nil {
		lookup = os.LookupEnv
	}
	t := reflect.TypeOf(cfg)
	if t == nil || t.Kind() != reflect.Struct {
		return cfg, fmt.Errorf("config: %T is not a struct type", cfg)
	}
	fields := walk(t, "", nil)

	environ := make(map[string]string, len(fields))
	for _, f := range fields {
		if v, ok := lookup(f.key); ok {
			environ[f.key] = v
		}
	}
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: environ}); err != nil {
		var zero T
		return zero, explain(err, fields, environ)
	}
	if v, ok := any(&cfg).(Validator); ok {
		if err := v.Validate(); err != nil {
			var zero T
			return zero, err
		}
	}
	return cfg, nil
}

// MapLookup returns a lookup function over m, for tests and for callers that
// assemble configuration themselves.
func MapLookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// structValue is the struct cfg is or points to; ok is false for a nil
// pointer or anything that is not a struct.
func structValue(cfg any) (reflect.Value, bool) {
	v := reflect.ValueOf(cfg)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return reflect.Value{}, false
		}
		v = v.Elem()
	}
	return v, v.Kind() == reflect.Struct
}

// Attrs returns one attribute per `env`-tagged field of cfg (a struct or a
// pointer to one), keyed by the variable name, in declaration order. Secret
// fields show as [Masked] or [Unset]; a password inside a URL value is
// replaced by "xxxxx" even when the field is not marked secret.
func Attrs(cfg any) []slog.Attr {
	v, ok := structValue(cfg)
	if !ok {
		return nil
	}
	fields := walk(v.Type(), "", nil)
	attrs := make([]slog.Attr, 0, len(fields))
	for _, f := range fields {
		fv, err := v.FieldByIndexErr(f.index)
		if err != nil {
			continue
		}
		attrs = append(attrs, slog.Attr{Key: f.key, Value: printable(fv, f.secret)})
	}
	return attrs
}

// LogValue returns what a start-up line such as
// logger.Info("starting", "config", config.LogValue(cfg)) shows: the
// [Changed] attributes as one group value, or "defaults" when every
// variable has its default. The whole configuration is [FullLogValue].
func LogValue(cfg any) slog.Value {
	changed := Changed(cfg)
	if len(changed) == 0 {
		return slog.StringValue("defaults")
	}
	return slog.GroupValue(changed...)
}

// FullLogValue returns cfg's [Attrs] as one group value: every variable,
// secrets masked (logged at debug level and printed by --print-config).
func FullLogValue(cfg any) slog.Value {
	return slog.GroupValue(Attrs(cfg)...)
}

// Common holds the settings every groundcrew service reads. Services embed it
// in their own configuration struct; each service declares its own listen
// and admin addresses.
type Common struct {
	// DataDir is where embedded stores (SQLite, indexes, artifacts) live.
	DataDir string `env:"DATA_DIR" envDefault:"./.groundcrew"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `env:"LOG_LEVEL" envDefault:"info"`
	// LogFormat is json or text.
	LogFormat string `env:"LOG_FORMAT" envDefault:"json"`
	// OTLPEndpoint is the OTLP/gRPC collector URL (e.g. http://localhost:4317);
	// empty disables trace export.
	OTLPEndpoint string `env:"OTEL_EXPORTER_OTLP_ENDPOINT"`
	// OTelServiceName overrides the service name reported in traces.
	OTelServiceName string `env:"OTEL_SERVICE_NAME"`
	// GracePeriod bounds how long in-flight requests may run at shutdown.
	GracePeriod time.Duration `env:"GRACE_PERIOD" envDefault:"10s"`
	// Transport secures the gRPC calls between services (GRPC_SHARED_TOKEN
	// or mTLS) and says what the ports expose (GRPC_REFLECTION,
	// ADMIN_PPROF).
	Transport Transport

	// Listeners are set by programs that embed services, never by the
	// environment; see [Listeners].
	Listeners Listeners `env:"-"`
}

// Listeners replace a service's configured listen addresses with listeners
// opened by whoever embeds the service. A program that runs several
// services in one process (the whole-stack tests) opens every listener on
// 127.0.0.1:0 first, so each service knows every other's address before any
// starts, with no fixed ports and no port races. A service closes the
// listeners it serves when it stops; one that fails before serving may not,
// so the embedder closes them after Run returns (closing twice is
// harmless). Nil fields mean "listen on the configured address".
type Listeners struct {
	// API is the service's own listener: gRPC for the services, REST for
	// the gateway.
	API net.Listener
	// Admin serves /metrics, /healthz and /readyz.
	Admin net.Listener
}

// Listen returns lis when the embedding program opened it (see
// [Listeners]), else listens on addr.
func Listen(ctx context.Context, lis net.Listener, addr string) (net.Listener, error) {
	if lis != nil {
		return lis, nil
	}
	var lc net.ListenConfig
	return lc.Listen(ctx, "tcp", addr)
}

// Validate checks the values that cannot be expressed as types.
func (c Common) Validate() error {
	var errs []error
	if _, err := logging.ParseLevel(c.LogLevel); err != nil {
		errs = append(errs, fmt.Errorf("LOG_LEVEL: must be debug, info, warn or error, got %q", c.LogLevel))
	}
	switch strings.ToLower(c.LogFormat) {
	case logging.FormatJSON, logging.FormatText:
	default:
		errs = append(errs, fmt.Errorf("LOG_FORMAT: must be json or text, got %q", c.LogFormat))
	}
	if c.GracePeriod < 0 {
		errs = append(errs, fmt.Errorf("GRACE_PERIOD: must not be negative, got %q", c.GracePeriod))
	}
	if c.OTLPEndpoint != "" {
		u, err := url.Parse(c.OTLPEndpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: must be a URL such as http://localhost:4317, got %q", c.OTLPEndpoint))
		}
	}
	if strings.TrimSpace(c.DataDir) == "" {
		errs = append(errs, errors.New("DATA_DIR: must not be empty"))
	}
	errs = append(errs, c.Transport.Validate())
	return errors.Join(errs...)
}

// ServiceName returns OTEL_SERVICE_NAME when set, otherwise def.
func (c Common) ServiceName(def string) string {
	if c.OTelServiceName != "" {
		return c.OTelServiceName
	}
	return def
}

// field is one `env`-tagged leaf of a configuration struct.
type field struct {
	key        string // full variable name, prefixes applied
	name       string // Go field name, as env.ParseError reports it
	typ        reflect.Type
	index      []int
	secret     bool
	def        string
	hasDefault bool
}

// walk lists the env-tagged leaves of t the way env/v11 visits them.
func walk(t reflect.Type, prefix string, index []int) []field {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		idx := append(append([]int(nil), index...), i)
		key, _, _ := strings.Cut(sf.Tag.Get("env"), ",")
		if key == "-" {
			continue
		}
		if key != "" {
			def, hasDef := sf.Tag.Lookup("envDefault")
			secret, _ := strconv.ParseBool(sf.Tag.Get("secret"))
			out = append(out, field{
				key: prefix + key, name: sf.Name, typ: sf.Type, index: idx,
				secret: secret, def: def, hasDefault: hasDef,
			})
			continue
		}
		if sf.Type.Kind() == reflect.Struct {
			out = append(out, walk(sf.Type, prefix+sf.Tag.Get("envPrefix"), idx)...)
		}
	}
	return out
}

// explain turns env/v11's errors into messages that name the variable and
// say what was expected.
func explain(err error, fields []field, environ map[string]string) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return fmt.Errorf("config: %w", err)
	}
	msgs := make([]error, 0, len(agg.Errors))
	for _, e := range agg.Errors {
		msgs = append(msgs, explainOne(e, fields, environ))
	}
	return errors.Join(msgs...)
}

func explainOne(err error, fields []field, environ map[string]string) error {
	var (
		parseErr   env.ParseError
		notSetErr  env.VarIsNotSetError
		emptyErr   env.EmptyVarError
		noParseErr env.NoParserError
	)
	switch {
	case errors.As(err, &parseErr):
		for _, f := range fields {
			if f.name != parseErr.Name || f.typ != parseErr.Type {
				continue
			}
			raw, set := environ[f.key]
			source := ""
			if !set {
				raw, source = f.def, " (the default)"
			}
			shown := strconv.Quote(raw)
			if f.secret {
				shown = "a masked value"
			}
			if errors.Is(parseErr.Err, strconv.ErrRange) {
				return fmt.Errorf("%s: %s is out of range for %s", f.key, shown, describe(f.typ))
			}
			return fmt.Errorf("%s: must be %s, got %s%s", f.key, describe(f.typ), shown, source)
		}
		return fmt.Errorf("field %s: %w", parseErr.Name, parseErr.Err)
	case errors.As(err, &notSetErr):
		return fmt.Errorf("%s: required but not set", notSetErr.Key)
	case errors.As(err, &emptyErr):
		return fmt.Errorf("%s: must not be empty", emptyErr.Key)
	case errors.As(err, &noParseErr):
		return fmt.Errorf("config field %s has type %s, which cannot be read from the environment", noParseErr.Name, noParseErr.Type)
	default:
		return err
	}
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	urlType      = reflect.TypeFor[url.URL]()
	locationType = reflect.TypeFor[time.Location]()
	textType     = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// describe names what a value of type t looks like, for error messages.
func describe(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case durationType:
		return `a duration such as "10s" or "1m30s"`
	case urlType:
		return "a URL"
	case locationType:
		return "a time zone name such as UTC or Europe/Berlin"
	}
	if reflect.PointerTo(t).Implements(textType) {
		return "a valid " + t.String()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a comma-separated list of " + plural(describe(t.Elem()))
	case reflect.Map:
		return "comma-separated key:value pairs"
	default:
		return "a valid " + t.String()
	}
}

func plural(s string) string {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "an "), "a ")
	switch {
	case strings.HasPrefix(s, "duration"):
		return "durations"
	case strings.HasPrefix(s, "true or false"):
		return "true/false values"
	case strings.HasSuffix(s, "s"):
		return s
	default:
		return s + "s"
	}
}

// printable renders a field value for a log line, hiding secrets.
func printable(v reflect.Value, secret bool) slog.Value {
	if secret {
		if v.IsZero() {
			return slog.StringValue(Unset)
		}
		return slog.StringValue(Masked)
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return slog.StringValue(Unset)
		}
		v = v.Elem()
	}
	switch x := v.Interface().(type) {
	case time.Duration:
		return slog.StringValue(x.String())
	case url.URL:
		return slog.StringValue(x.Redacted())
	case string:
		return slog.StringValue(redactURL(x))
	case []string:
		out := make([]string, len(x))
		for i, s := range x {
			out[i] = redactURL(s)
		}
		return slog.AnyValue(out)
	case fmt.Stringer:
		return slog.StringValue(x.String())
	default:
		return slog.AnyValue(x)
	}
}

// redactURL hides the password of a URL with user info, so a DATABASE_URL
// that nobody marked secret still does not leak its password.
func redactURL(s string) string {
	if !strings.Contains(s, "@") || !strings.Contains(s, "://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		// Unparseable but shaped like a URL with credentials: print nothing
		// that could be the password.
		return Masked
	}
	return u.Redacted()
}
