// Package e2e holds groundcrew's whole-stack tests: all four services and
// the gateway run in one process (package stack), against local
// stand-ins for every provider (package providerfake) with faults injected
// in front of them (package faultinject). cmd/stackload drives the built
// binaries the same way for the soak and fault runs in BENCHMARKS.md.
package e2e
