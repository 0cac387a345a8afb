package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel stop the service when stackload ends,
// however it ends (a signal, a closed pipe): no orphans left polling and
// skewing the next run.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
