// Package actor carries the name of the authenticated caller from the REST
// edge to the services, so approvals, reviews, silences and sends record who
// did them.
//
// The gateway sets the name after it has checked the caller's API key (the
// key's name from GATEWAY_API_KEYS) and drops any value a client tried to
// send itself; services only read it. A self-declared name in a request body
// (decided_by, reviewer, by) stays a display note beside the actor. Between
// services the value is trusted as far as the gRPC ports are: turn on
// GRPC_SHARED_TOKEN or mTLS so only our own callers can set it.
package actor

import (
	"context"
	"strings"

	"google.golang.org/grpc/metadata"
)

// MetadataKey is the gRPC metadata key holding the actor's name.
const MetadataKey = "x-groundcrew-actor"

// maxLen bounds a name read from metadata; API key names are short.
const maxLen = 128

// FromContext returns the actor named in the incoming gRPC metadata, or ""
// when the call carries none (a direct gRPC caller, a test, an open gateway).
func FromContext(ctx context.Context) string {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return ""
	}
	vals := md.Get(MetadataKey)
	if len(vals) != 1 {
		// None, or several: a smuggled second value is not believed.
		return ""
	}
	name := strings.TrimSpace(vals[0])
	if len(name) > maxLen || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return ""
	}
	return name
}

// OutgoingContext returns ctx with the actor set on outgoing gRPC metadata,
// replacing any value already there. An empty name removes it.
func OutgoingContext(ctx context.Context, name string) context.Context {
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	md.Delete(MetadataKey)
	if name != "" {
		md.Set(MetadataKey, name)
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// Or returns the actor from ctx when there is one, else fallback (for
// example "telegram:@ann" for a button press, or a self-declared name on an
// open, loopback-only gateway).
func Or(ctx context.Context, fallback string) string {
	if a := FromContext(ctx); a != "" {
		return a
	}
	return fallback
}

// SelfDeclared follows a name the caller gave about itself, unchecked.
const SelfDeclared = " (self-declared)"

// Resolve is who acted, by the one rule every service follows: the
// authenticated caller's name when the call carries one, else the name the
// caller declared (a request's by or decided_by) followed by SelfDeclared,
// else "". selfDeclared reports the second case.
func Resolve(ctx context.Context, declared string) (name string, selfDeclared bool) {
	if a := FromContext(ctx); a != "" {
		return a, false
	}
	declared = strings.Join(strings.Fields(declared), " ")
	if declared == "" || len(declared) > maxLen || strings.ContainsFunc(declared, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", false
	}
	return declared + SelfDeclared, true
}
