package daemon

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// A second signal sent while the first stage is still telling the user
// (a slow or blocked stderr) ends the hard stage: it is never dropped.
func TestStopSecondSignalDuringSay(t *testing.T) {
	for i := 0; i < 20; i++ {
		saying := make(chan struct{})
		st := OnSignals(context.Background(), func(_ string, hard bool) {
			if !hard {
				close(saying)
				time.Sleep(5 * time.Millisecond)
			}
		})
		syscall.Kill(syscall.Getpid(), syscall.SIGINT)
		<-saying
		syscall.Kill(syscall.Getpid(), syscall.SIGINT)
		waitDone(t, st.Hard, "hard stage after a second signal sent while the first was told")
		st.Close()
	}
}
