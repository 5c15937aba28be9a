package redistest

import "testing"

// StartServerOn is StartServer trying ports in the order given.
func StartServerOn(tb testing.TB, ports ...int) *Server {
	tb.Helper()
	dir := tb.TempDir()
	next := 0
	pick := func(testing.TB) int {
		p := ports[next%len(ports)]
		next++
		return p
	}
	return startServer(tb, pick, func(port int) []string { return serverArgs(port, dir) }, dir, "")
}

// StartAttempts is how many ports a new server tries.
const StartAttempts = startAttempts
