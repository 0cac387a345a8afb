package search

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, matched with errors.Is. The gRPC adapter maps
// ErrInvalidQuery and ErrUnknownEngine to InvalidArgument with a field
// violation (the field, or engine), ErrEngineNotConfigured to
// FailedPrecondition, and *EngineError to DeadlineExceeded or Unavailable
// (see EngineError).
var (
	ErrInvalidQuery        = errors.New("invalid query")
	ErrUnknownEngine       = errors.New("unknown engine")
	ErrEngineNotConfigured = errors.New("engine not configured")
)

// InvalidArgumentError is a bad request field. It matches ErrInvalidQuery.
type InvalidArgumentError struct {
	// Field is the request field at fault, in the domain's spelling
	// ("query", "max_results", "allowed_domains", "documents[3].url").
	Field string
	// Reason says what is wrong, for people.
	Reason string
}

// Error returns "invalid <field>: <reason>".
func (e *InvalidArgumentError) Error() string {
	return fmt.Sprintf("invalid %s: %s", e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidQuery) true.
func (e *InvalidArgumentError) Is(target error) bool { return target == ErrInvalidQuery }

func invalid(field, format string, args ...any) error {
	return &InvalidArgumentError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// NotConfiguredError reports a request for an engine that is known but not
// configured. It matches ErrEngineNotConfigured.
type NotConfiguredError struct {
	Engine string
	// EnvVar is the variable to set (for auto: the list of them).
	EnvVar string
}

// Error names the engine and the variable to set.
func (e *NotConfiguredError) Error() string {
	return fmt.Sprintf("engine %s is not configured: set %s", e.Engine, e.EnvVar)
}

// Is makes errors.Is(err, ErrEngineNotConfigured) true.
func (e *NotConfiguredError) Is(target error) bool { return target == ErrEngineNotConfigured }

// EngineError reports that no engine answered. Err joins each tried
// engine's error (prefixed with its name), so errors.Is(err,
// context.DeadlineExceeded) tells a timeout from an outage.
type EngineError struct {
	// Engine is the last engine tried (or being tried when the caller's
	// deadline ran out).
	Engine string
	// Tried lists every engine tried, in order, Engine last.
	Tried []string
	// FallbackTried reports whether more than one engine was tried.
	FallbackTried bool
	// NoFallback explains why no fallback was tried, when it was not:
	// the engine was requested by name, or auto had no other engine.
	NoFallback string
	Err        error
}

// Error names the engine, the fallbacks tried (or why none was) and
// each engine's error.
func (e *EngineError) Error() string {
	var b strings.Builder
	if e.FallbackTried {
		fmt.Fprintf(&b, "search engine %s failed after falling back from %s",
			e.Engine, strings.Join(e.Tried[:len(e.Tried)-1], ", "))
	} else {
		fmt.Fprintf(&b, "search engine %s failed", e.Engine)
		if e.NoFallback != "" {
			fmt.Fprintf(&b, " (no fallback tried: %s)", e.NoFallback)
		}
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(strings.ReplaceAll(e.Err.Error(), "\n", "; "))
	}
	return b.String()
}

// Unwrap returns the joined engine errors.
func (e *EngineError) Unwrap() error { return e.Err }
