// Package tools pins the code generators and linters groundcrew runs with
// `go tool -modfile=tools/go.mod …`. It is not part of go.work: buf as a tool
// dependency breaks `go mod tidy` in any module that lists it.
package tools
