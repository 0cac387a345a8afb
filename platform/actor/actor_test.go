package actor

import (
	"context"
	"testing"

	"google.golang.org/grpc/metadata"
)

func TestFromContext(t *testing.T) {
	tests := []struct {
		name string
		md   metadata.MD
		want string
	}{
		{"none", nil, ""},
		{"one", metadata.Pairs(MetadataKey, "ci"), "ci"},
		{"trimmed", metadata.Pairs(MetadataKey, " ops "), "ops"},
		{"two values are not believed", metadata.Pairs(MetadataKey, "ci", MetadataKey, "admin"), ""},
		{"control characters", metadata.Pairs(MetadataKey, "a\nb"), ""},
		{"too long", metadata.Pairs(MetadataKey, string(make([]byte, 200))), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.md != nil {
				ctx = metadata.NewIncomingContext(ctx, tt.md)
			}
			if got := FromContext(ctx); got != tt.want {
				t.Errorf("FromContext() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOutgoingContextReplaces(t *testing.T) {
	ctx := metadata.AppendToOutgoingContext(context.Background(), MetadataKey, "client-said", "x-request-id", "r1")
	ctx = OutgoingContext(ctx, "ci")
	md, _ := metadata.FromOutgoingContext(ctx)
	if got := md.Get(MetadataKey); len(got) != 1 || got[0] != "ci" {
		t.Errorf("actor metadata = %v, want [ci]", got)
	}
	if got := md.Get("x-request-id"); len(got) != 1 {
		t.Errorf("other metadata lost: %v", got)
	}
	md, _ = metadata.FromOutgoingContext(OutgoingContext(ctx, ""))
	if got := md.Get(MetadataKey); len(got) != 0 {
		t.Errorf("empty name left %v", got)
	}
}

func TestOr(t *testing.T) {
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(MetadataKey, "ops"))
	if got := Or(ctx, "telegram:@ann"); got != "ops" {
		t.Errorf("Or with actor = %q", got)
	}
	if got := Or(context.Background(), "telegram:@ann"); got != "telegram:@ann" {
		t.Errorf("Or without actor = %q", got)
	}
}

func TestResolve(t *testing.T) {
	withKey := metadata.NewIncomingContext(context.Background(), metadata.Pairs(MetadataKey, "ci"))
	tests := []struct {
		name     string
		ctx      context.Context
		declared string
		want     string
		self     bool
	}{
		{"key name wins", withKey, "ann", "ci", false},
		{"no key: the declared name, marked", context.Background(), " ann ", "ann" + SelfDeclared, true},
		{"neither", context.Background(), "  ", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, self := Resolve(tt.ctx, tt.declared)
			if got != tt.want || self != tt.self {
				t.Errorf("Resolve() = %q, %v; want %q, %v", got, self, tt.want, tt.self)
			}
		})
	}
}
