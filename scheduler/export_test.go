package scheduler

// Kill cancels everything at once, for a test's cleanup: production stops
// with Shutdown, whose deadline cancels what is still running.
func (s *Scheduler) Kill() {
	s.stopNow()
	s.cancel()
}
