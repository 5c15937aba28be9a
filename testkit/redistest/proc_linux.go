package redistest

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel SIGKILL a server if the test binary dies
// before its Cleanup runs (a panic, a -timeout), so none outlives its test.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
