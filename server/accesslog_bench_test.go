package server

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkAccessLogLine is the CPU one request's access line costs, to a
// file: "per-line" is how serve wrote it before (slog.Logger.Info, one
// write system call each), "batched" is AccessLog (the writes of its
// batches and its Close counted in). cpu-µs/op is the process's CPU time
// (getrusage), which a shared machine's load moves less than wall time.
//
//	go test -run '^$' -bench AccessLogLine -benchtime 200000x ./server
func BenchmarkAccessLogLine(b *testing.B) {
	line := accessLine{id: "86914cc3b28e0347", client: "127.0.0.1", method: "GET", path: "/charts/US",
		route: "/charts/{region}", code: 200, bytes: 12465, took: 24 * time.Microsecond}
	text := func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) }
	for _, tc := range []struct {
		name string
		run  func(f *os.File, pb func(func()))
	}{
		{"per-line", func(f *os.File, each func(func())) {
			log := slog.New(text(f))
			each(func() {
				log.Info("http", "request_id", line.id, "client", line.client, "method", line.method, "path", line.path,
					"route", line.route, "code", line.code, "bytes", line.bytes, "duration_ms", float64(line.took.Microseconds())/1000)
			})
		}},
		{"batched", func(f *os.File, each func(func())) {
			a := NewAccessLog(f, text, nil)
			each(func() { a.add(line) })
			if err := a.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
		}},
	} {
		for _, par := range []bool{false, true} {
			name := tc.name
			if par {
				name += "-parallel"
			}
			b.Run(name, func(b *testing.B) {
				f, err := os.Create(filepath.Join(b.TempDir(), "access.log"))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				cpu := benchCPU()
				b.ResetTimer()
				tc.run(f, func(add func()) {
					if !par {
						for range b.N {
							add()
						}
						return
					}
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							add()
						}
					})
				})
				b.StopTimer()
				b.ReportMetric(float64((benchCPU()-cpu).Nanoseconds())/1000/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// benchCPU is the process's user and system CPU time so far.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
