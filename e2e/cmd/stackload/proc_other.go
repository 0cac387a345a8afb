//go:build !linux

package main

import "os/exec"

// dieWithParent does nothing where the kernel cannot tie a child's life to
// its parent's; stackload stops its services itself when it returns.
func dieWithParent(*exec.Cmd) {}
