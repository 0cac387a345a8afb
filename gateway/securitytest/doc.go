// Package securitytest reproduces the attacks on the REST edge that issues
// 13 and 29 list, against the real gateway handler (server.Dial and
// server.NewHandler over loopback gRPC backends), and shows each refused:
// cross-site text/plain POSTs, DNS rebinding, junk bearer tokens dodging the
// rate limit, header smuggling to backends, lifting the backend deadline,
// stream floods, scope violations (an alerts key on every other route), a
// forged actor, spent key budgets, webhook bodies over 64 KiB or without
// the secret, and requests without a key held open past their bounds.
// BenchmarkUnauthenticatedFlood runs the flood of issue 29 against
// server.Run and reports the heap it costs. It holds tests only.
package securitytest
