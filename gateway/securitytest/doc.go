// Package securitytest reproduces the attacks on the REST edge that issue
// 13 lists, against the real gateway handler (server.Dial and
// server.NewHandler over loopback gRPC backends), and shows each refused:
// cross-site text/plain POSTs, DNS rebinding, junk bearer tokens dodging the
// rate limit, header smuggling to backends, lifting the backend deadline,
// stream floods, scope violations and a forged actor. It holds tests only.
package securitytest
