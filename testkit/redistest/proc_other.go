//go:build !linux

package redistest

import "os/exec"

// setDeathSignal: only Linux ties a child's life to its parent's; elsewhere
// the test's Cleanup alone stops the server.
func setDeathSignal(*exec.Cmd) {}
