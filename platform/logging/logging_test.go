package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/groundcrew/groundcrew/platform/logging"
)

func TestHandlerAddsCorrelationIDs(t *testing.T) {
	var buf bytes.Buffer
	logger, err := logging.New(&buf, "json", "debug")
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	traceID := trace.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c}
	spanID := trace.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31}
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    traceID,
		SpanID:     spanID,
		TraceFlags: trace.FlagsSampled,
	}))
	ctx = logging.WithRequestID(ctx, "req-123")

	logger.With("component", "test").InfoContext(ctx, "hello", "n", 1)

	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("decoding %q: %v", buf.String(), err)
	}
	want := map[string]string{
		"request_id": "req-123",
		"trace_id":   "0af7651916cd43dd8448eb211c80319c",
		"span_id":    "b7ad6b7169203331",
		"component":  "test",
		"msg":        "hello",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("record[%q] = %v, want %q (record %s)", k, got[k], v, buf.String())
		}
	}
}

func TestHandlerWithoutCorrelationIDs(t *testing.T) {
	var buf bytes.Buffer
	logger, err := logging.New(&buf, "text", "info")
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	logger.InfoContext(context.Background(), "plain")
	logger.Debug("filtered out")
	out := buf.String()
	for _, s := range []string{"request_id", "trace_id", "span_id", "filtered out"} {
		if strings.Contains(out, s) {
			t.Errorf("output %q contains %q", out, s)
		}
	}
	if !strings.Contains(out, "msg=plain") {
		t.Errorf("output %q lacks the message", out)
	}
}

func TestNewRejectsUnknownSettings(t *testing.T) {
	tests := []struct {
		format, level, wantErr string
	}{
		{"yaml", "info", `log format "yaml"`},
		{"json", "loud", `log level "loud"`},
	}
	for _, tt := range tests {
		_, err := logging.New(&bytes.Buffer{}, tt.format, tt.level)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("New(%q, %q) error = %v, want one containing %q", tt.format, tt.level, err, tt.wantErr)
		}
	}
}

func TestParseLevel(t *testing.T) {
	tests := map[string]slog.Level{
		"debug": slog.LevelDebug, "INFO": slog.LevelInfo, "warning": slog.LevelWarn,
		"warn": slog.LevelWarn, "error": slog.LevelError, "": slog.LevelInfo,
	}
	for in, want := range tests {
		got, err := logging.ParseLevel(in)
		if err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v, want %v", in, got, err, want)
		}
	}
}

func TestRequestIDRoundTrip(t *testing.T) {
	ctx := context.Background()
	if got := logging.RequestID(ctx); got != "" {
		t.Errorf("RequestID(empty ctx) = %q, want \"\"", got)
	}
	if got := logging.RequestID(logging.WithRequestID(ctx, "abc")); got != "abc" {
		t.Errorf("RequestID = %q, want %q", got, "abc")
	}
}

func TestNewRequestID(t *testing.T) {
	a, b := logging.NewRequestID(), logging.NewRequestID()
	if len(a) != 32 || a == b || !logging.ValidRequestID(a) {
		t.Errorf("NewRequestID() = %q, %q; want two different valid 32-character ids", a, b)
	}
}

func TestValidRequestID(t *testing.T) {
	tests := map[string]bool{
		"abc-123": true, "": false, "has space": false, "new\nline": false,
		strings.Repeat("x", 128): true, strings.Repeat("x", 129): false, "ünïcode": false,
	}
	for id, want := range tests {
		if got := logging.ValidRequestID(id); got != want {
			t.Errorf("ValidRequestID(%q) = %v, want %v", id, got, want)
		}
	}
}
