package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/testkit/redistest"
	"github.com/ytrend/ytrend/testkit/s3test"
	"github.com/ytrend/ytrend/view"
)

// TestStandbyResumesWhenItsReplicaComesBack runs a leader and a standby of
// `ytrend run --serve` on one Redis with one real S3 replica (versitygw).
// The S3 server is stopped while the leader fetches on, then restarted on
// the same address and data: the standby, which could not read the replica
// meanwhile (its /readyz says so), resumes following by itself, and its copy
// catches up: it serves every run the leader finished, with the same pages,
// the ones stored during the outage included.
func TestStandbyResumesWhenItsReplicaComesBack(t *testing.T) {
	t.Parallel()
	redistest.Client(t)
	srv := s3test.Start(t, "ytrend")
	w := newWorld(t, sim.Config{})
	w.env["REDIS_URL"] = redistest.URL()
	w.env["AWS_ACCESS_KEY_ID"], w.env["AWS_SECRET_ACCESS_KEY"] = s3test.AccessKey, s3test.SecretKey
	leader, standby := followingPair(t, w, srv.URL("ytrend", "archive"), `
  - {code: US, cron: "@every 3s", pages: 2}`, 4)
	lweb, sweb := serveAddr(t, leader), serveAddr(t, standby)

	// The replica goes away; the leader fetches on.
	srv.Stop()
	down := leader.requests.Load()
	eventually(t, "the standby to report that it cannot read the replica", func() (bool, string) {
		code, body := get(t, standby.base+"/readyz")
		return code == 200 && strings.Contains(body, "warning: last replica error"), body
	})
	waitFor(t, "four pages stored while the replica is down", 60*time.Second, func() bool {
		return leader.requests.Load() >= down+4
	})
	srv.Restart(t)
	back := leader.requests.Load()
	waitFor(t, "two pages stored after the replica came back", 60*time.Second, func() bool {
		return leader.requests.Load() >= back+2
	})

	// Every run the leader finished by now reaches the standby's copy.
	runs := func(base string) map[int64]view.Run {
		code, body := get(t, base+"/api/v1/runs?limit=100")
		var page struct {
			Runs []view.Run `json:"runs"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &page) != nil {
			t.Fatalf("runs from %s: %d %s", base, code, body)
		}
		out := map[int64]view.Run{}
		for _, r := range page.Runs {
			out[r.ID] = r
		}
		return out
	}
	finished := map[int64]view.Run{}
	for id, r := range runs(lweb) {
		if r.FinishedAt != "" {
			finished[id] = r
		}
	}
	if len(finished) < 4 {
		t.Fatalf("the leader finished %d runs, want at least 4 (two before, two during the outage)", len(finished))
	}
	eventually(t, "the standby's copy to catch up with every finished run", func() (bool, string) {
		got := runs(sweb)
		for id, r := range finished {
			if g, ok := got[id]; !ok || g.Pages != r.Pages || g.FinishedAt != r.FinishedAt {
				return false, fmt.Sprintf("run %d: leader %+v, standby %+v", id, r, g)
			}
		}
		return true, ""
	})
	code, body := get(t, standby.base+"/readyz")
	if code != 200 || !strings.Contains(body, "standby: following replica") {
		t.Errorf("the standby's readyz after the replica came back: %d %s", code, body)
	}
	t.Logf("%d runs finished; pages %d before the outage, %d by its end, %d at the check", len(finished), down, back, leader.requests.Load())
	w.assertNoKey(leader.logs.String(), standby.logs.String())
}
